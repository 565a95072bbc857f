// Shared by the browser test files (not the benchmark): the fixtures `cargo xtask` prepared,
// and one Chromium and static server per test file with a page opener that records what
// went wrong in the page.
import { after, before } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, serve, settled } from './common.mjs';

export const SITE = process.env.GPUWHY_VIEWER_SITE;
export const FIX = process.env.GPUWHY_VIEWER_FIXTURES;
if (!SITE || !FIX) throw new Error('set GPUWHY_VIEWER_SITE and GPUWHY_VIEWER_FIXTURES (cargo xtask test does)');

// A JSON fixture from GPUWHY_VIEWER_FIXTURES.
// A fixture report as JSON, its samples in the plain form (`t`, `metrics`) whichever form
// the file holds: the compact one's packed arrays (docs/report-format.md) are expanded.
export const fixture = (name) => {
  const report = JSON.parse(readFileSync(join(FIX, name), 'utf8'));
  for (const stream of [...(report.series || []), report.host || {}]) plainSamples(stream);
  return report;
};
const runs = (packed) => {
  const out = [];
  let prev = 0;
  for (const item of packed.runs) {
    const [d, n] = Array.isArray(item) ? item : [item, 1];
    for (let i = 0; i < n; i++) {
      if (d === null) out.push(null);
      else out.push((prev += d) / packed.div);
    }
  }
  return out;
};
const plain = (v) => (Array.isArray(v) ? v : runs(v));
function plainSamples(s) {
  if (s.times) s.t = plain(s.times);
  if (s.columns) s.metrics = Object.fromEntries(Object.entries(s.columns).map(([k, v]) => [k, plain(v)]));
  delete s.times;
  delete s.columns;
}

// Starts Chromium and a server of the site (with the fixtures under /fixtures/) before the
// file's tests and stops them after. `base` is the server's URL once started; `open(url)`
// loads a page and waits for it to settle, returning the page, its state, the script errors
// and dialogs it raised, and the paths it fetched.
export function viewerSuite() {
  let browser;
  let srv;
  before(async () => {
    browser = await launch();
    srv = await serve({ '/fixtures/': FIX, '/': SITE });
  });
  after(async () => {
    await browser?.close();
    srv?.server.close();
  });
  return {
    get base() { return srv.base; },
    async open(url) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const errors = [];
      const fetched = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
      page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
      await page.goto(url);
      const state = await settled(page);
      return { page, state, errors, fetched };
    },
  };
}

// An `nvidia-smi dmon` log (-s puc, no time column) of `samples` rows per GPU, every GPU
// busy 6 s then idle 4 s: gpuwhy's rules call that a GPU waiting for input data.
export function dmonLog(samples, gpus) {
  let s = '';
  for (let i = 0; i < samples; i++) {
    if (i % 20 === 0) {
      s += '# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk\n';
      s += '# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz\n';
    }
    for (let g = 0; g < gpus; g++) {
      const busy = i % 10 < 6;
      const [pwr, sm, mem] = busy ? [610, 97, 45] : [120, 2, 1];
      s += `${String(g).padStart(5)} ${String(pwr).padStart(6)} ${String(50 + g).padStart(6)}      - ${String(sm).padStart(6)} ${String(mem).padStart(6)}      0      0      0      0   2619   1980\n`;
    }
  }
  return s;
}

// Drops a file (bytes given as an array of numbers, or text) onto the page, as a person
// dragging it from their file manager would, and waits for the page to settle.
export async function drop(page, name, content) {
  await page.evaluate(() => { document.body.dataset.state = 'dropping'; });
  const dt = await page.evaluateHandle(({ name, content }) => {
    const dt = new DataTransfer();
    const body = typeof content === 'string' ? content : new Uint8Array(content);
    dt.items.add(new File([body], name));
    return dt;
  }, { name, content });
  await page.dispatchEvent('main', 'drop', { dataTransfer: dt });
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 60000 });
  return page.evaluate(() => document.body.dataset.state);
}

