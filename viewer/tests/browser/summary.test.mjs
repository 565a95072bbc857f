// Browser tests of the summary page `gpuwhy summary … --html` writes (issue 30): opened from
// file:// as a user opens it, its table sorts and filters and pages, its links open the
// runs' own report pages, and text from the reports stays text. The reports are generated
// here; the page is written by the gpuwhy binary GPUWHY_BIN names (default:
// target/debug/gpuwhy). Run by `cargo xtask test` with the other browser tests, or alone:
// `node --test viewer/tests/browser/summary.test.mjs`. Screenshot: target/viewer-test/summary.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launch } from './common.mjs';
import { PAGE, scriptHash } from '../../tools/summary-csp.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = process.env.GPUWHY_BIN || join(ROOT, 'target', 'debug', 'gpuwhy');
const SHOTS = process.env.GPUWHY_VIEWER_FIXTURES || join(ROOT, 'target', 'viewer-test');
const RUNS = 250;
const XSS = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>';
const CAUSES = ['data_starvation', 'throttling', 'none', 'launch_bound', 'comm_sync'];

// Report `i`: label, host, GPUs, verdict and lost share vary with i; run 7 has a label
// that is markup, run 12 names run 11 as its baseline.
function report(i) {
  const cause = CAUSES[i % CAUSES.length];
  const r = {
    schema: 'gpuwhy.report/1',
    run: {
      start_unix_ms: Date.UTC(2026, 10, 1) + i * 3 * 3600e3, duration_s: 600 + 37 * i,
      host: `node-${i % 4}`, label: i === 7 ? XSS : `exp-${i % 3}`, complete: true, source: 'nvml',
    },
    verdict: { id: cause, title: `title of ${cause}`, confidence: 0.5 + (i % 5) / 10,
      lost_share: cause === 'none' ? undefined : ((i * 7) % 50) / 100, summary: 's' },
    findings: [],
    devices: Array.from({ length: 1 + (i % 3) }, (_, d) => ({ index: d, name: 'NVIDIA H100 80GB HBM3' })),
  };
  if (i === 12) {
    r.comparison = { baseline: 'runs-in/r0011.json', error: null, result: {
      labels: ['a', 'b'], forced_despite: null, steps: null, gpus: [],
      verdict: { baseline_top: ['data_starvation', 0.6], candidate_top: [cause, 0.7], resolved: ['data_starvation'], new: [], persisting: [] },
      experiments: [], summary: 'data_starvation 0.60 → resolved; new top finding: throttling 0.70' } };
  }
  return r;
}

let dir;
let truth;
let browser;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpuwhy-summary-'));
  const input = join(dir, 'runs-in');
  mkdirSync(input);
  for (let i = 0; i < RUNS; i++) writeFileSync(join(input, `r${String(i).padStart(4, '0')}.json`), JSON.stringify(report(i)));
  writeFileSync(join(input, 'cut.json'), JSON.stringify(report(0)).slice(0, 100));
  const args = ['summary', input, '--html', join(dir, 'index.html')];
  execFileSync(BIN, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  truth = JSON.parse(execFileSync(BIN, ['summary', input, '--json'], { maxBuffer: 1 << 28 }).toString());
  browser = await launch();
});
after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function open(url) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  await page.waitForFunction(() => ['ready', 'error', 'empty'].includes(document.body.dataset.state), null, { timeout: 60000 });
  return { page, errors };
}
const index = () => pathToFileURL(join(dir, 'index.html')).href;
const column = (page, n) => page.$$eval(`#runs tbody tr td:nth-child(${n})`, (tds) => tds.map((td) => td.textContent));

describe('the summary page', () => {
  test("its policy names its script's hash", () => {
    assert.ok(readFileSync(PAGE, 'utf8').includes(`'sha256-${scriptHash(readFileSync(PAGE, 'utf8'))}'`),
      'run node viewer/tools/summary-csp.mjs');
  });

  test('opens from file:// and shows the first page of runs, the totals, the chart and the files not read', async () => {
    const { page, errors } = await open(index());
    assert.deepEqual(errors, []);
    assert.equal(await page.locator('#runs tbody tr').count(), 100);
    assert.equal(await page.textContent('#count'), `${RUNS} of ${RUNS} runs`);
    assert.equal(await page.textContent('#pageinfo'), 'page 1 of 3');
    assert.ok((await page.textContent('#headline')).includes(`${truth.totals.gpu_hours_lost.toFixed(1)} lost`));
    assert.ok(await page.locator('#chart svg rect').count() > 10);
    const legend = await page.$$eval('#legend span', (s) => s.map((x) => x.textContent));
    assert.deepEqual(legend, truth.totals.by_cause.filter((g) => g.gpu_hours_lost > 0).map((g) => g.key));
    assert.ok((await page.textContent('#unreadable')).includes('cut short'));
    await page.click('#next');
    assert.equal(await page.textContent('#pageinfo'), 'page 2 of 3');
    assert.equal((await column(page, 10))[0], truth.runs[100].file);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'summary.png'), fullPage: false });
    await page.close();
  });

  test('sorts by a column, both ways', async () => {
    const { page } = await open(index());
    const lost = [...truth.runs.map((r) => r.gpu_hours_lost)];
    await page.click('#runs th[data-key="gpu_hours_lost"]');
    const down = (await column(page, 9)).map(Number);
    assert.deepEqual(down, lost.sort((a, b) => b - a).slice(0, 100).map((x) => Number(x.toFixed(2))));
    assert.equal(await page.getAttribute('#runs th[data-key="gpu_hours_lost"]', 'aria-sort'), 'descending');
    await page.click('#runs th[data-key="gpu_hours_lost"]');
    const up = (await column(page, 9)).map(Number);
    assert.deepEqual(up, [...lost].sort((a, b) => a - b).slice(0, 100).map((x) => Number(x.toFixed(2))));
    await page.click('#runs th[data-key="host"]');
    const hosts = await column(page, 3);
    assert.deepEqual(hosts, [...hosts].sort((a, b) => a.localeCompare(b)));
    assert.equal(hosts[0], 'node-0');
    await page.close();
  });

  test('filters by words, all of which must match', async () => {
    const { page } = await open(index());
    await page.fill('#filter', 'node-2 throttling');
    const want = truth.runs.filter((r) => r.host === 'node-2' && r.verdict === 'throttling');
    assert.ok(want.length > 0);
    assert.equal(await page.textContent('#count'), `${want.length} of ${RUNS} runs`);
    assert.deepEqual(await column(page, 10), want.map((r) => r.file).slice(0, 100));
    await page.fill('#filter', 'no-such-run');
    assert.equal(await page.locator('#runs tbody tr').count(), 0);
    await page.fill('#filter', '');
    assert.equal(await page.locator('#runs tbody tr').count(), 100);
    await page.close();
  });

  test("a run's link opens its own report page, relative to the index", async () => {
    const { page } = await open(index());
    const a = page.locator('#runs tbody tr').first().locator('a');
    const href = await a.getAttribute('href');
    assert.match(href, /^runs\/\d{5}-r0000\.html$/);
    await a.click();
    await page.waitForURL(/runs\/.*\.html$/);
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
    assert.equal(await page.textContent('.verdict-title'), truth.runs[0].title);
    await page.close();
  });

  test('shows the change a run tried against its baseline, with the comparison', async () => {
    const { page } = await open(index());
    const rows = await page.$$eval('#fixes tbody tr', (trs) => trs.map((tr) => tr.textContent));
    const fix = truth.fixes.find((f) => f.via === 'baseline');
    assert.equal(fix.before, truth.runs.find((r) => r.file.endsWith('r0011.json')).file);
    assert.ok(rows.some((t) => t.includes('[baseline] data_starvation 0.60 → resolved') && t.includes(fix.outcome)), rows.join('\n'));
    await page.close();
  });

  test('text from a report is shown as text, never run', async () => {
    const { page, errors } = await open(index());
    await page.fill('#filter', 'onerror');
    assert.equal(await page.locator('#runs tbody tr').count(), 1);
    assert.equal((await column(page, 2))[0], XSS);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.locator('#runs img').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
