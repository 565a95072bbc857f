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
export const fixture = (name) => JSON.parse(readFileSync(join(FIX, name), 'utf8'));

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
