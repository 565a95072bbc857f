// Writes the hash of viewer/summary/summary.html's inline script into the page's own
// Content-Security-Policy, which allows that script only. Run it after editing the script
// (`node viewer/tools/summary-csp.mjs`); `--check` fails when the hash is stale (the
// summary page's browser test runs it too). The CLI embeds the page as it is committed.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PAGE = join(dirname(fileURLToPath(import.meta.url)), '..', 'summary', 'summary.html');

// The hash the page's policy must name: of the text between its last `<script>` and `</script>`.
export function scriptHash(html) {
  const start = html.lastIndexOf('<script>') + '<script>'.length;
  const end = html.indexOf('</script>', start);
  return createHash('sha256').update(html.slice(start, end), 'utf8').digest('base64');
}

const POLICY = /script-src 'sha256-[^']*'/;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const html = readFileSync(PAGE, 'utf8');
  const want = `script-src 'sha256-${scriptHash(html)}'`;
  if (process.argv.includes('--check')) {
    if (!html.includes(want)) {
      console.error(`${PAGE}: the policy does not name the script's hash; run node viewer/tools/summary-csp.mjs`);
      process.exit(1);
    }
  } else {
    writeFileSync(PAGE, html.replace(POLICY, want));
  }
}
