// Two reports side by side: the report shown is the baseline, a second one ("Compare
// with…", a second dropped file, ?compare=, or the one `gpuwhy view --compare` embeds) is
// the candidate. The comparison section comes first: what `gpuwhy compare` says (the
// verdict diff, findings, step and per-GPU changes), both runs' step-time histograms
// overlaid, and each GPU's utilization in both runs. "Swap" makes the candidate the
// baseline (and the report shown in full below).
//
// As in app.js, report text never reaches innerHTML from here: HTML and SVG come from the
// Rust side, which escapes everything it takes from a report; file names go through
// textContent or to Rust as text.

// @inline-strip-begin (the single-file export inlines the glue and charts.js above this)
import { Viewer } from './gpuwhy_viewer.js';
import { $, buildReport, chartWidth, darkQuery, fetchSameSite, readFile, state } from './charts.js';
// @inline-strip-end

export const other = { viewer: null, name: '' };

function compareMessage(title, message) {
  const box = $('compare-message');
  box.replaceChildren();
  if (title) {
    const h = document.createElement('strong');
    h.textContent = title;
    const p = document.createElement('p');
    p.textContent = message;
    box.append(h, p);
  }
  box.hidden = !title;
}

// Draws the comparison section for the report shown and the other one (hidden without both).
function draw() {
  const section = $('compare');
  const a = state.viewer;
  const b = other.viewer;
  section.hidden = !(a && b);
  if (!a || !b) return;
  const names = [state.name || 'report', other.name || 'report'];
  $('compare-body').innerHTML = a.compareHtml(b, names[0], names[1], chartWidth(), darkQuery.matches);
}

// Draws the comparison (after a report is opened, a swap, a theme or width change); says
// so in the section when it cannot.
export function renderCompare() {
  try {
    draw();
  } catch (e) {
    compareMessage('The comparison could not be drawn', String(e));
  }
}

// Opens `bytes` as the report to compare with; says why in the section when it cannot.
export function openCompareBytes(bytes, name) {
  let v;
  try {
    v = Viewer.open(bytes, name);
  } catch (e) {
    let err;
    try {
      err = JSON.parse(e);
    } catch (_) {
      err = { title: 'This file cannot be opened', message: String(e) };
    }
    $('compare').hidden = false;
    compareMessage(`Cannot compare with ${name}: ${err.title || 'it cannot be opened'}`, err.message || String(e));
    return;
  }
  compareMessage(null);
  if (other.viewer) other.viewer.free();
  other.viewer = v;
  other.name = name;
  renderCompare();
}

export function openCompareFile(file) {
  return readFile(file, openCompareBytes, (e) => compareMessage(`${file.name} could not be read`, e));
}

// ?compare=: a report on this site, as ?url= is.
export function openCompareUrl(param) {
  return fetchSameSite(param,
    { param: '?compare=', verb: 'compared', instead: 'use "Compare with…"', what: 'The report to compare with' },
    openCompareBytes,
    (title, message) => {
      $('compare').hidden = false;
      compareMessage(title, message);
    });
}

// The report `gpuwhy view --compare` embedded, if any.
export function openEmbeddedCompare() {
  const el = $('gpuwhy-compare');
  const text = el ? el.textContent.trim() : '';
  if (text) openCompareBytes(new TextEncoder().encode(text), el.dataset.name || 'candidate.json');
}

function swap() {
  if (!state.viewer || !other.viewer) return;
  [state.viewer, other.viewer] = [other.viewer, state.viewer];
  [state.name, other.name] = [other.name, state.name];
  state.info = JSON.parse(state.viewer.info());
  buildReport();
  renderCompare();
}

function stop() {
  if (other.viewer) other.viewer.free();
  other.viewer = null;
  other.name = '';
  compareMessage(null);
  $('compare').hidden = true;
}

// Wires the picker, the section's buttons, and redrawing on theme and width changes.
export function wireCompare() {
  $('compare-file').addEventListener('change', (e) => {
    const f = e.target.files && e.target.files[0];
    if (f) openCompareFile(f);
    e.target.value = '';
  });
  $('compare-swap').addEventListener('click', swap);
  $('compare-stop').addEventListener('click', stop);
  darkQuery.addEventListener('change', () => renderCompare());
  let timer = null;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => other.viewer && renderCompare(), 200);
  });
}
