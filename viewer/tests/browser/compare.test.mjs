// Browser tests of two reports side by side, run by `cargo xtask test` (node --test) against
// Debian's Chromium. The fixtures (from `cargo xtask`): starved.json, a data-starved demo
// run; fixed.json, the same job with its data phase cut from 450 to 30 ms; compare.json,
// what `gpuwhy compare starved.json fixed.json --json` says; compare.html, the single file
// `gpuwhy view starved.json --compare fixed.json` wrote; demo.json, eight GPUs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIX, fixture, viewerSuite } from './suite.mjs';

const starved = fixture('starved.json');
const fixed = fixture('fixed.json');
const cli = fixture('compare.json');
const demo = fixture('demo.json');

const suite = viewerSuite();
const { open } = suite;

// `[stroke, stroke-width, points]` of every polyline in `selector` (a string or a locator).
const polylines = (page, selector) =>
  (typeof selector === 'string' ? page.locator(selector) : selector).locator('polyline').evaluateAll((ps) =>
    ps.map((p) => [p.getAttribute('stroke'), p.getAttribute('stroke-width'),
      (p.getAttribute('points') || '').trim().split(/\s+/).length]));

// The comparison of `a` (baseline) with `b`, as the page must show it.
async function checkComparison(page, a, b, summary) {
  await page.waitForSelector('#compare:not([hidden]) .compare-summary');
  // First in the report, before the baseline's own verdict.
  const order = await page.$$eval('#report > *', (els) => els.map((e) => e.id));
  assert.equal(order[0], 'compare');
  assert.equal(await page.textContent('.compare-summary'), summary);
  // Both runs' step histograms on one chart: one outline each, in two colours.
  assert.equal(await page.locator('figure.compare-hist svg').count(), 1);
  const outlines = (await polylines(page, 'figure.compare-hist svg')).filter(([, w, n]) => w === '2' && n > 4);
  assert.equal(outlines.length, 2, JSON.stringify(outlines));
  assert.notEqual(outlines[0][0], outlines[1][0], 'two colours');
  const legend = await page.textContent('figure.compare-hist svg');
  assert.match(legend, new RegExp(`baseline \\(${a.steps.duration.length} steps\\): p50 .+, p95 `));
  assert.match(legend, new RegExp(`candidate \\(${b.steps.duration.length} steps\\): p50 .+, p95 `));
  // One utilization chart per GPU, each drawing both runs.
  const figs = page.locator('figure.compare-util');
  assert.equal(await figs.count(), a.series.length);
  for (let i = 0; i < a.series.length; i++) {
    const lines = (await polylines(page, figs.nth(i)))
      .filter(([, w, n]) => w === '1' && n > 10);
    const colours = new Set(lines.map(([c]) => c));
    assert.equal(colours.size, 2, `GPU chart ${i}: both runs (${JSON.stringify(lines)})`);
  }
  // The step-time change with its test, and the GPUs' medians.
  const text = await page.textContent('#compare-body');
  assert.match(text, /p95/);
  assert.match(text, /Mann–Whitney U: (significant|not significant)/);
  assert.equal(await page.locator('table.compare-gpus tbody tr').count(), a.series.length);
}

describe('two reports side by side', () => {
  test('?url= and ?compare= open on the comparison, worded as gpuwhy compare words it', async () => {
    const { page, state, errors } = await open(
      `${suite.base}/index.html?url=/fixtures/starved.json&compare=/fixtures/fixed.json`);
    assert.equal(state, 'ready', errors.join('\n'));
    await checkComparison(page, starved, fixed, cli.summary);
    assert.match(cli.summary, /data_starvation [0-9.]+ → resolved; new top finding/);
    assert.match(await page.textContent('table.compare-findings'), /data_starvation.*resolved/s);
    // Below it, the baseline in full.
    assert.equal(await page.textContent('.verdict-title'), starved.verdict.title);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(FIX, 'compare.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the single file from gpuwhy view --compare works from file://', async () => {
    const { page, state, errors } = await open(pathToFileURL(join(FIX, 'compare.html')).href);
    assert.equal(state, 'ready', errors.join('\n'));
    await checkComparison(page, starved, fixed, cli.summary);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('"Compare with…" adds a second report; Swap and Stop comparing', async () => {
    const { page, state } = await open(`${suite.base}/index.html?url=/fixtures/fixed.json`);
    assert.equal(state, 'ready');
    assert.ok(await page.isHidden('#compare'));
    await page.setInputFiles('#compare-file', join(FIX, 'starved.json'));
    await page.waitForSelector('#compare:not([hidden]) .compare-summary');
    // fixed.json is the baseline now: the starvation is new in the candidate.
    assert.match(await page.textContent('table.compare-findings'), /data_starvation.*new/s);
    await page.click('#compare-swap');
    await checkComparison(page, starved, fixed, cli.summary);
    assert.equal(await page.textContent('.verdict-title'), starved.verdict.title);
    await page.click('#compare-stop');
    assert.ok(await page.isHidden('#compare'));
    // A file that is not a report says so in the section, and the report stays.
    await page.setInputFiles('#compare-file', join(FIX, 'invalid.json'));
    await page.waitForSelector('#compare-message:not([hidden])');
    assert.match(await page.textContent('#compare-message'), /Cannot compare with invalid\.json/);
    assert.equal(await page.textContent('.verdict-title'), starved.verdict.title);
    await page.close();
  });

  test('eight GPUs compared with themselves: a chart per GPU, nothing significant', async () => {
    const { page, state, errors } = await open(
      `${suite.base}/index.html?url=/fixtures/demo.json&compare=/fixtures/demo.json`);
    assert.equal(state, 'ready', errors.join('\n'));
    assert.ok(demo.series.length > 1);
    const top = `${demo.verdict.id} ${demo.verdict.confidence.toFixed(2)} → ${demo.verdict.confidence.toFixed(2)}`;
    const summary = await page.textContent('.compare-summary');
    assert.match(summary, /^step time p50 \+0\.0% \(not significant, p = [0-9.]+\); /);
    assert.ok(summary.endsWith(`; ${top}`), summary);
    await checkComparison(page, demo, demo, summary);
    const gpus = await page.textContent('table.compare-gpus');
    assert.equal(gpus.split('not significant').length - 1, demo.series.length, gpus);
    assert.equal(gpus.split('significant').length, gpus.split('not significant').length, gpus);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
