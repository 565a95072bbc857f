// `cargo xtask bench summary`'s page part: opens a summary page from file:// in headless
// Chromium three times and prints, as one JSON line, the medians of the page's own marks
// (milliseconds from navigation): `table`, the first screen of runs built; `ready`, the
// chart, totals and changes too.
import { pathToFileURL } from 'node:url';
import { launch } from './common.mjs';

const file = process.argv[2];
if (!file) throw new Error('usage: node summary-bench.mjs INDEX.html');
const browser = await launch();
const runs = [];
for (let i = 0; i < 3; i++) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 120000 });
  runs.push(await page.evaluate(() => ({
    table: performance.getEntriesByName('gpuwhy-table')[0].startTime,
    ready: performance.getEntriesByName('gpuwhy-ready')[0].startTime,
    rows: document.querySelectorAll('#runs tbody tr').length,
  })));
  await page.close();
}
await browser.close();
const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[1];
console.log(JSON.stringify({ table_ms: median('table'), ready_ms: median('ready'), rows: runs[0].rows }));
