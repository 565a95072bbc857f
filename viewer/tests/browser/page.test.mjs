// Browser tests of the page every gpuwhy binary writes (issue 17), run by `cargo xtask test`
// next to viewer.test.mjs: the page a new user's `gpuwhy demo` leaves (the viewer embedded
// in the binary from viewer/dist/, nothing else built), a single file with the analysis
// module reading a dropped log, and the step and PCIe charts looked at as a reader would,
// at desktop and phone widths. Screenshots land in GPUWHY_VIEWER_FIXTURES (page-*.png).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIX, dmonLog, drop, fixture, viewerSuite } from './suite.mjs';

const suite = viewerSuite();
const { open } = suite;
const demo = fixture('fresh/gpuwhy-demo-data_starvation.json');
const PHONE = { width: 390, height: 844 };

// The first phase's colour: its legend swatch's (the first 10 px square of the chart).
const firstPhase = (page) => page.$$eval('#steps-stacked svg rect', (rects) =>
  [...rects].find((r) => Number(r.getAttribute('width')) === 10).getAttribute('fill'));
// The step chart's columns: `[x, width]` of each rect drawn in `fill` under the title strip
// (where the legend is), in order.
const columns = (page, fill) => page.$$eval('#steps-stacked svg rect', (rects, fill) => [...rects]
  .filter((r) => r.getAttribute('fill') === fill && Number(r.getAttribute('y')) >= 18)
  .filter((r) => Number(r.getAttribute('height')) > 0)
  .map((r) => [Number(r.getAttribute('x')), Number(r.getAttribute('width'))])
  .sort((a, b) => a[0] - b[0]), fill);
const plotWidth = (page) => page.$eval('#steps-stacked svg', (s) => Number(s.getAttribute('width')) - 64 - 16);

// Resizes to a phone's width and waits for the charts to be drawn again at that width.
async function toPhone(page) {
  await page.setViewportSize(PHONE);
  await page.waitForFunction((w) => {
    const svg = document.querySelector('figure.gpu-timeline svg');
    return svg && Number(svg.getAttribute('width')) <= w;
  }, PHONE.width, { timeout: 10000 });
}

describe('the page gpuwhy demo leaves', () => {
  const html = join(FIX, 'fresh', 'gpuwhy-demo-data_starvation.html');

  test('is beside the report, and the demo said how to open it', () => {
    const said = readFileSync(join(FIX, 'fresh', 'stdout.txt'), 'utf8');
    assert.ok(said.includes(`Open it in a browser: ${pathToFileURL(html).href}`), said);
  });

  test('renders the verdict and charts from file:// with the viewer embedded in the binary', async () => {
    const { page, state, errors, fetched } = await open(pathToFileURL(html).href);
    assert.equal(state, 'ready', errors.join('\n'));
    assert.equal(await page.textContent('.verdict-title'), demo.verdict.title);
    assert.equal(demo.verdict.id, 'data_starvation');
    assert.equal(await page.locator('article.finding').count(), demo.findings.length);
    assert.equal(await page.locator('figure.gpu-timeline .svg svg').count(), demo.series.length);
    assert.equal(await page.locator('#steps-stacked svg').count(), 1);
    assert.equal(await page.locator('#steps-hist svg').count(), 1);
    // Nothing but the page itself was loaded.
    assert.deepEqual(fetched, [new URL(pathToFileURL(html)).pathname]);
    assert.deepEqual(errors, []);
    await page.screenshot({ path: join(FIX, 'page-demo.png') });
    await page.close();
  });

  test('draws its 15 steps as 15 columns as wide as the steps, at desktop and phone widths', async () => {
    const { page, state } = await open(pathToFileURL(html).href);
    assert.equal(state, 'ready');
    const steps = demo.steps.t.length;
    assert.ok(steps >= 12 && steps <= 16, `${steps} steps`);
    const span = demo.run.duration_s;
    const fill = await firstPhase(page);
    for (const [label, resize] of [['desktop', null], ['phone', toPhone]]) {
      if (resize) await resize(page);
      const cols = await columns(page, fill);
      const plot = await plotWidth(page);
      assert.equal(cols.length, steps, `${label}: a column per step`);
      // A 1 s step of a 15 s run is a fifteenth of the plot (less a pixel between steps).
      const want = (plot * 0.9 * (demo.steps.duration[1] / span));
      for (const [x, w] of cols) assert.ok(w >= want - 2, `${label}: ${w} px at ${x}, want ≥ ${want}`);
      assert.match(await page.textContent('#steps-stacked'), /a column per step/);
      const section = page.locator('#steps-section');
      await section.scrollIntoViewIfNeeded();
      await section.screenshot({ path: join(FIX, `page-steps15-${label}.png`) });
    }
    await page.close();
  });

  test('draws the metrics read once a second as a dot per read, at desktop and phone widths', async () => {
    const { page, state } = await open(pathToFileURL(html).href);
    assert.equal(state, 'ready');
    const { metrics } = demo.series[0];
    const count = (m) => (metrics[m] || []).filter((v) => v !== null).length;
    const util = count('util_gpu');
    // The demo's GPU reads PCIe through its byte-counter fields on every tick, so its slow
    // series are the GPM metrics (once a second); PCIe is drawn as a line.
    // Every timeline metric read (like PCIe) far less often than utilization: its reads.
    const TIMELINE = ['util_gpu', 'gpm_sm_util', 'gpm_sm_occupancy', 'gpm_tensor', 'power', 'sm_clock', 'mem_used', 'pcie_rx', 'pcie_tx', 'temp'];
    const reads = TIMELINE.map(count).filter((n) => n > 0 && n * 5 < util).sort((a, b) => a - b);
    assert.ok(reads.length >= 2, `${reads}`);
    const fig = page.locator('figure.gpu-timeline').first();
    for (const [label, resize] of [['desktop', null], ['phone', toPhone]]) {
      if (resize) await resize(page);
      const dots = await fig.locator('svg path[stroke-linecap="round"]').evaluateAll((ps) =>
        ps.map((p) => (p.getAttribute('d').match(/h0/g) || []).length));
      // One path of dots per slow series, a dot per read.
      assert.deepEqual(dots.sort((a, b) => a - b), reads, `${label}: dots per path, reads per slow series`);
      assert.ok(await fig.locator('text', { hasText: 'PCIe (MB/s)' }).count() === 1);
      await fig.scrollIntoViewIfNeeded();
      await fig.screenshot({ path: join(FIX, `page-pcie-${label}.png`) });
    }
    await page.close();
  });
});

describe('a report of 100,000 steps', () => {
  test('draws its step times as columns a few pixels wide, at desktop and phone widths', async () => {
    const { page, state, errors } = await open(pathToFileURL(join(FIX, 'steps100k.html')).href);
    assert.equal(state, 'ready', errors.join('\n'));
    const fill = await firstPhase(page);
    for (const [label, resize] of [['desktop', null], ['phone', toPhone]]) {
      if (resize) await resize(page);
      const cols = await columns(page, fill);
      const plot = await plotWidth(page);
      assert.ok(Math.abs(cols.length - plot / 3) <= 2, `${label}: ${cols.length} columns over ${plot} px`);
      assert.ok(cols.every(([, w]) => w >= 2), `${label}: no hairlines`);
      assert.match(await page.textContent('#steps-stacked'), /mean per column/);
      const section = page.locator('#steps-section');
      await section.scrollIntoViewIfNeeded();
      await section.screenshot({ path: join(FIX, `page-steps100k-${label}.png`) });
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('draws rows and buckets merged by time: the first minutes, buckets, the last hour', async () => {
    const { page, state, errors } = await open(pathToFileURL(join(FIX, 'steps100k.html')).href);
    assert.equal(state, 'ready', errors.join('\n'));
    // The data lines (one pixel wide) of the first timeline: x never goes back in a line,
    // and together they span the plot, over rows and buckets alike.
    const lines = await page.$$eval('figure.gpu-timeline svg polyline[stroke-width="1"]', (ps) =>
      ps.map((p) => p.getAttribute('points').trim().split(/\s+/).map((xy) => Number(xy.split(',')[0]))));
    assert.ok(lines.length > 0, 'lines drawn');
    for (const xs of lines) {
      assert.ok(xs.every((x, i) => i === 0 || x >= xs[i - 1]), `x goes back in a line: ${xs.slice(0, 20)}`);
    }
    const all = lines.flat();
    const plot = await page.$eval('figure.gpu-timeline svg', (s) => Number(s.getAttribute('width')) - 64 - 16);
    assert.ok(Math.max(...all) - Math.min(...all) > 0.9 * plot, `lines span ${Math.min(...all)}–${Math.max(...all)} of ${plot} px`);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('a single file written with --with-analysis', () => {
  test('reads a dropped dmon log from file://, with the module inline', async () => {
    const url = pathToFileURL(join(FIX, 'analysis.html')).href;
    const { page, state, errors, fetched } = await open(url);
    assert.equal(state, 'ready', errors.join('\n'));
    assert.equal(await page.textContent('.verdict-title'), demo.verdict.title);
    assert.ok(await page.isVisible('#rerun'), 'the rules can be re-run here');
    // Re-running the rules on the report shown.
    await page.evaluate(() => { document.body.dataset.state = 'rerun'; });
    await page.click('#rerun');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 60000 });
    assert.match(await page.textContent('.verdict-summary'), /Rules re-run in this browser/);
    // A dropped log.
    assert.equal(await drop(page, 'run.log', dmonLog(120, 2)), 'ready', await page.textContent('#message'));
    assert.equal(await page.textContent('.verdict-title'), 'GPU waits for input data');
    assert.match(await page.textContent('.verdict-summary'), /From an nvidia-smi dmon log \(run\.log\), analysed in this browser/);
    assert.equal(await page.locator('figure.gpu-timeline .svg svg').count(), 2);
    assert.match(await page.textContent('#analysis-notes'), /Read from run\.log:/);
    assert.deepEqual(fetched, [new URL(url).pathname], 'nothing fetched');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
