// The report's charts and their interaction: figures for every time chart, drawing them
// for the visible range (SVG fragments from the WebAssembly module, already escaped there),
// brush-to-zoom across all of them, hover and keyboard read-outs, and the Numbers tables.
// app.js loads reports and builds the page with `buildReport`.
//
// Report text never reaches innerHTML from here: strings from a report go through
// textContent; HTML comes only from the Rust side.

// Plot margins, as in viewer/src/chart/mod.rs (LEFT, RIGHT).
const LEFT = 64;
const RIGHT = 16;
const MIN_SPAN = 0.001;

export const $ = (id) => document.getElementById(id);
// The WebAssembly module a single-file page carries inline in the element `id` (base64 of
// its gzip, which keeps the page and the gpuwhy binary that embeds it small), unzipped;
// null when there is none (the static page fetches its modules instead).
export async function inlineWasm(id) {
  const b64 = $(id) ? $(id).textContent.trim() : '';
  if (!b64) return null;
  const bin = atob(b64);
  const gz = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) gz[i] = bin.charCodeAt(i);
  const raw = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(raw).arrayBuffer());
}
// A file saved gzip-compressed (`run.json.gz`: gzip's first bytes are 1f 8b), unzipped by
// the browser's own DecompressionStream (no decompressor in the WebAssembly); other bytes as
// they are.
export async function unzipped(bytes) {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  const raw = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(raw).arrayBuffer());
}
export const darkQuery = window.matchMedia('(prefers-color-scheme: dark)');
export const state = {
  viewer: null,
  info: null,
  t0: 0,
  t1: 1,
  cursor: null,
  width: 0,
  charts: [], // { el, kind, pos }
};

// Reads a picked or dropped file and hands its bytes and name to `open`; `fail` gets the
// error as text when the file cannot be read (or `open` throws). For both app.js and
// compare.js: here, the single file inlines it for both.
export async function readFile(file, open, fail) {
  try {
    open(await unzipped(new Uint8Array(await file.arrayBuffer())), file.name);
  } catch (e) {
    fail(String(e));
  }
}

// Fetches the report at a same-site address given in the page's query (`?url=`,
// `?compare=`) and calls `open(bytes, name)`, or `fail(title, message)` saying what went
// wrong: not an address, another site's (a page must not fetch what a link points it to
// elsewhere), or the fetch failed. `how` words the messages for the caller: `param` (the
// query key with its `=`), `verb` ("opened"), `instead` (what to do with a file from another
// site), `what` ("The report"). For both app.js and compare.js, as `readFile` above.
export async function fetchSameSite(param, how, open, fail) {
  let url;
  try {
    url = new URL(param, window.location.href);
  } catch (_) {
    fail('That address is not valid', `${how.param}${param} is not an address.`);
    return;
  }
  if (url.origin !== window.location.origin) {
    fail(`Only reports from this site can be ${how.verb} by address`,
      `${url.href} is on another site. Download it and ${how.instead} instead.`);
    return;
  }
  let bytes;
  try {
    const resp = await fetch(url, { credentials: 'same-origin' });
    if (!resp.ok) throw new Error(`${resp.status} ${resp.statusText}`);
    bytes = await unzipped(new Uint8Array(await resp.arrayBuffer()));
  } catch (e) {
    fail(`${how.what} could not be fetched`, `${url.href}: ${e.message || e}`);
    return;
  }
  open(bytes, url.pathname.split('/').pop() || 'report.json');
}

function timeText(t, span) {
  if (!Number.isFinite(t)) return '—';
  const a = Math.abs(t);
  const sign = t < 0 ? '-' : '';
  if (span >= 120) {
    const s = Math.round(a);
    const hh = Math.floor(s / 3600);
    const mm = String(Math.floor(s / 60) % 60).padStart(2, '0');
    const ss = String(s % 60).padStart(2, '0');
    return hh > 0 ? `${sign}${hh}:${mm}:${ss}` : `${sign}${Math.floor(s / 60)}:${ss}`;
  }
  return `${sign}${a.toFixed(span >= 5 ? 1 : 3)} s`;
}

export function chartWidth() {
  const w = $('timelines').clientWidth || document.documentElement.clientWidth - 32;
  return Math.max(320, Math.floor(w));
}

function pxToTime(fig, clientX) {
  const plot = fig.querySelector('.plot');
  const r = plot.getBoundingClientRect();
  const x = clientX - r.left;
  const w = r.width - LEFT - RIGHT;
  const f = Math.min(1, Math.max(0, (x - LEFT) / w));
  return state.t0 + f * (state.t1 - state.t0);
}

function timeToPx(t, width) {
  const w = width - LEFT - RIGHT;
  return LEFT + ((t - state.t0) / (state.t1 - state.t0)) * w;
}

// A figure holding one time chart, with overlays for the brush and the cursor.
function makeFigure(kind, pos, caption) {
  const fig = document.createElement('figure');
  fig.className = `timechart ${kind}`;
  fig.dataset.kind = kind;
  if (pos !== undefined) fig.dataset.pos = String(pos);
  fig.tabIndex = 0;
  const cap = document.createElement('figcaption');
  cap.textContent = caption;
  const plot = document.createElement('div');
  plot.className = 'plot';
  plot.setAttribute('role', 'img');
  const brush = document.createElement('div');
  brush.className = 'brush';
  brush.hidden = true;
  const cursor = document.createElement('div');
  cursor.className = 'cursor';
  cursor.hidden = true;
  const svg = document.createElement('div');
  svg.className = 'svg';
  plot.append(svg, brush, cursor);
  const chart = { el: fig, kind, pos, stale: true };
  fig.append(cap, plot);
  if (kind !== 'steps-stacked') {
    // The numbers (min, median, max over the visible range) are asked for when opened.
    const numbers = document.createElement('details');
    numbers.className = 'numbers';
    const summary = document.createElement('summary');
    summary.textContent = 'Numbers';
    const body = document.createElement('div');
    body.className = 'numbers-body';
    numbers.append(summary, body);
    numbers.addEventListener('toggle', () => fillNumbers(chart));
    fig.append(numbers);
  }
  wireChart(fig);
  state.charts.push(chart);
  return fig;
}

// Fills a chart's numbers table for the visible range, if it is open and out of date.
function fillNumbers(c) {
  const details = c.el.querySelector('details.numbers');
  if (!details || !details.open || !c.stale) return;
  const v = state.viewer;
  const { t0, t1 } = state;
  const html = {
    'gpu-timeline': () => v.timelineNumbers(c.pos, t0, t1),
    heatmap: () => v.heatmapNumbers(t0, t1, false),
    'host-timeline': () => v.hostNumbers(t0, t1),
    cores: () => v.heatmapNumbers(t0, t1, true),
  }[c.kind];
  details.querySelector('.numbers-body').innerHTML = html ? html() : '';
  c.stale = false;
}

// Draws every time chart for the current range. `width` is measured when not given (a
// forced layout: buildReport measures before it fills the page instead).
export function renderCharts(width = chartWidth()) {
  const v = state.viewer;
  if (!v) return;
  const { t0, t1 } = state;
  const dark = darkQuery.matches;
  state.width = width;
  for (const c of state.charts) {
    const svg = c.el.querySelector('.svg');
    const plot = c.el.querySelector('.plot');
    let markup;
    switch (c.kind) {
      case 'gpu-timeline':
        markup = v.timeline(c.pos, t0, t1, width, dark);
        plot.setAttribute('aria-label', v.timelineLabel(c.pos, t0, t1));
        break;
      case 'heatmap':
        markup = v.heatmap(t0, t1, width, dark);
        plot.setAttribute('aria-label', 'GPU busy share per GPU over time; its Numbers table has the values');
        break;
      case 'host-timeline':
        markup = v.host(t0, t1, width, dark) || '';
        plot.setAttribute('aria-label', 'Host CPU, disk, memory and pressure over time; its Numbers table has the values');
        break;
      case 'cores':
        markup = v.cores(t0, t1, width, dark) || '';
        plot.setAttribute('aria-label', 'CPU busy share per core over time; its Numbers table has the values');
        break;
      case 'steps-stacked':
        markup = v.stepsStacked(t0, t1, width, dark) || '';
        plot.setAttribute('aria-label', 'Step time by phase over the run; the phase table below has the numbers');
        break;
      default:
        markup = '';
    }
    svg.innerHTML = markup;
    c.el.dataset.t0 = String(t0);
    c.el.dataset.t1 = String(t1);
    c.stale = true;
    fillNumbers(c);
  }
  const hist = $('steps-hist');
  if (state.info.has_steps) {
    hist.innerHTML = v.stepsHistogram(width, dark) || '';
    const svg = hist.querySelector('svg');
    if (svg) {
      svg.setAttribute('role', 'img');
      svg.setAttribute('aria-label', 'Histogram of step times with the median (p50) and 95th percentile (p95) marked; the phase table has the numbers');
    }
  }
  const span = state.info.t1 - state.info.t0;
  $('range').textContent = `Showing ${timeText(t0, span)} – ${timeText(t1, span)} of ${timeText(state.info.t1, span)}`;
  drawCursor();
}

export function setRange(a, b) {
  const { t0: lo, t1: hi } = state.info;
  let t0 = Math.max(lo, Math.min(a, b));
  let t1 = Math.min(hi, Math.max(a, b));
  if (t1 - t0 < MIN_SPAN) {
    t1 = Math.min(hi, t0 + MIN_SPAN);
    t0 = Math.max(lo, t1 - MIN_SPAN);
  }
  state.t0 = t0;
  state.t1 = t1;
  renderCharts();
}

export function zoom(factor, center) {
  const c = center ?? state.cursor ?? (state.t0 + state.t1) / 2;
  const span = (state.t1 - state.t0) * factor;
  let a = c - (c - state.t0) * factor;
  let b = a + span;
  const { t0: lo, t1: hi } = state.info;
  if (a < lo) { b += lo - a; a = lo; }
  if (b > hi) { a -= b - hi; b = hi; }
  setRange(a, b);
}

export function pan(fraction) {
  const span = state.t1 - state.t0;
  const { t0: lo, t1: hi } = state.info;
  let a = state.t0 + span * fraction;
  a = Math.max(lo, Math.min(a, hi - span));
  setRange(a, a + span);
}

function drawCursor() {
  for (const c of state.charts) {
    const el = c.el.querySelector('.cursor');
    if (state.cursor === null || state.cursor < state.t0 || state.cursor > state.t1) {
      el.hidden = true;
      continue;
    }
    el.style.left = `${timeToPx(state.cursor, state.width)}px`;
    el.hidden = false;
  }
}

function showReadout(pos, t) {
  state.cursor = t;
  drawCursor();
  const box = $('readout');
  const gpu = state.info.gpus[pos];
  if (!gpu) return;
  const rows = JSON.parse(state.viewer.readout(pos, t));
  box.replaceChildren();
  const h = document.createElement('strong');
  h.textContent = `${gpu.label} at ${timeText(t, state.t1 - state.t0)}`;
  const dl = document.createElement('dl');
  for (const r of rows) {
    const dt = document.createElement('dt');
    dt.textContent = r.series;
    const dd = document.createElement('dd');
    dd.textContent = r.value;
    dl.append(dt, dd);
  }
  box.append(h, dl);
  box.hidden = false;
}

function wireChart(fig) {
  let drag = null;
  const plot = () => fig.querySelector('.plot');
  fig.addEventListener('pointerdown', (e) => {
    if (e.button !== 0 || !plot().contains(e.target)) return;
    const r = plot().getBoundingClientRect();
    drag = { x0: e.clientX - r.left, id: e.pointerId };
    plot().setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  fig.addEventListener('pointermove', (e) => {
    const r = plot().getBoundingClientRect();
    const x = e.clientX - r.left;
    if (drag) {
      const brush = fig.querySelector('.brush');
      const a = Math.max(LEFT, Math.min(drag.x0, x));
      const b = Math.min(r.width - RIGHT, Math.max(drag.x0, x));
      brush.style.left = `${a}px`;
      brush.style.width = `${Math.max(0, b - a)}px`;
      brush.hidden = false;
      return;
    }
    if (fig.dataset.kind === 'gpu-timeline' && x >= LEFT && x <= r.width - RIGHT) {
      showReadout(Number(fig.dataset.pos), pxToTime(fig, e.clientX));
    }
  });
  const end = (e) => {
    if (!drag) return;
    const r = plot().getBoundingClientRect();
    const x1 = e.clientX - r.left;
    const x0 = drag.x0;
    drag = null;
    fig.querySelector('.brush').hidden = true;
    if (Math.abs(x1 - x0) > 4) {
      setRange(pxToTime(fig, r.left + x0), pxToTime(fig, r.left + x1));
    }
  };
  fig.addEventListener('pointerup', end);
  fig.addEventListener('pointercancel', () => {
    drag = null;
    fig.querySelector('.brush').hidden = true;
  });
  fig.addEventListener('dblclick', () => setRange(state.info.t0, state.info.t1));
  fig.addEventListener('keydown', (e) => {
    const step = (state.t1 - state.t0) / 100;
    const pos = fig.dataset.kind === 'gpu-timeline' ? Number(fig.dataset.pos) : 0;
    const here = state.cursor ?? (state.t0 + state.t1) / 2;
    switch (e.key) {
      case 'ArrowLeft':
      case 'ArrowRight': {
        const t = Math.max(state.t0, Math.min(state.t1, here + (e.key === 'ArrowLeft' ? -step : step)));
        showReadout(pos, t);
        break;
      }
      case '+':
      case '=':
        zoom(0.5);
        break;
      case '-':
      case '_':
        zoom(2);
        break;
      case '0':
        setRange(state.info.t0, state.info.t1);
        break;
      default:
        return;
    }
    e.preventDefault();
  });
}

export function buildReport() {
  const v = state.viewer;
  const info = state.info;
  // Measured while the report is still empty: cheap now, a full layout once it is filled.
  const width = chartWidth();
  state.charts = [];
  $('run').innerHTML = v.runHtml();
  $('verdict').innerHTML = v.verdictHtml();
  $('findings').innerHTML = v.findingsHtml();
  const ranks = v.ranksHtml();
  $('ranks-section').hidden = !ranks;
  $('ranks').innerHTML = ranks;
  $('devices').innerHTML = v.devicesHtml();
  $('overhead').innerHTML = v.overheadHtml();
  $('events').innerHTML = v.eventsHtml(200);
  $('title').textContent = info.verdict;

  const heat = $('heatmap');
  heat.replaceChildren();
  if (info.gpus.length > 1) heat.append(makeFigure('heatmap', undefined, 'All GPUs: how busy each was over time'));
  const tl = $('timelines');
  tl.replaceChildren();
  for (const g of info.gpus) tl.append(makeFigure('gpu-timeline', g.pos, g.label));
  if (info.gpus.length === 0) {
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = 'This report has no GPU samples.';
    tl.append(p);
  }
  $('legend-events').textContent = 'Vertical lines mark events: red for faults (XID errors, a lost GPU), purple for others. Dashed lines are limits from the device facts.';

  $('steps-section').hidden = !info.has_steps;
  $('steps-stacked').replaceChildren();
  $('steps-hist').replaceChildren();
  $('phases').innerHTML = '';
  if (info.has_steps) {
    $('steps-stacked').append(makeFigure('steps-stacked', undefined, 'Step time by phase over the run'));
    $('phases').innerHTML = v.phasesHtml();
  }

  $('host-facts').innerHTML = v.hostFactsHtml();
  $('host').replaceChildren();
  $('cores').replaceChildren();
  if (info.has_host) {
    $('host').append(makeFigure('host-timeline', undefined, 'Host over time'));
    $('cores').append(makeFigure('cores', undefined, 'CPU cores'));
  }

  state.t0 = info.t0;
  state.t1 = info.t1;
  state.cursor = null;
  $('readout').hidden = true;
  renderCharts(width);
}
