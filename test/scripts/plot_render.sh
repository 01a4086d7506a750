#!/usr/bin/env bash
# hopper.learning_curves_svg as a browser draws it (issue 25): headless Chromium renders the
# pictures of two fit_multiple runs of three configurations that differ only in their learning rate,
# one evaluated at every iteration and one only at its last (fit_multiple's default), and checks
# what a reader sees: one legend entry per configuration, each inside the picture, naming its
# learning rate, no two alike; three lines, or three dots whose centre pixels have their curve's
# colour. Screenshots (PNG) go to $HOPPER_RENDER_DIR when it is set.
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT) and chromium (scripts/install-deps.sh
# installs it); skips without chromium.
set -euo pipefail
if ! command -v chromium >/dev/null; then
  echo "plot_render.sh: SKIPPED: chromium is not installed (apt-get install chromium)"
  exit 0
fi
DB=hopper_plot_render
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "plot_render.sh: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d /tmp/hopper-plot-render.XXXXXX)
trap 'rm -rf "$work"' EXIT
shots=${HOPPER_RENDER_DIR:-$work}
mkdir -p "$shots"
# As root Chromium needs --no-sandbox; its own profile keeps runs apart.
browse() { chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" "$@" 2>/dev/null; }

psql -qX -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE pts AS
SELECT g AS id, ARRAY[(g % 2) * 3.0 + sin(g), cos(g)]::float8[] AS x, (g % 2)::text AS y FROM generate_series(1, 200) g;
SELECT hopper.preprocess('pts', 'packed', 'y', 'x', buffer_size => 50, num_segments => 2);
SELECT hopper.load_model_arch('archs', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}');
-- The compile parameters as JSON, the learning rate last: the old legend, their first 45
-- characters, cut it off, and the three entries read the same.
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1], ARRAY[
    '{"optimizer": "adam", "loss": "categorical_crossentropy", "metrics": ["accuracy"], "learning_rate": 0.001}',
    '{"optimizer": "adam", "loss": "categorical_crossentropy", "metrics": ["accuracy"], "learning_rate": 0.01}',
    '{"optimizer": "adam", "loss": "categorical_crossentropy", "metrics": ["accuracy"], "learning_rate": 0.1}'],
    ARRAY['batch_size=10']);
CALL hopper.fit_multiple('packed', 'every', 'configs', 4, metrics_compute_frequency => 1, name => 'every');
CALL hopper.fit_multiple('packed', 'last', 'configs', 4, name => 'last');
SQL

# check NAME EXPECTED_LINES EXPECTED_DOTS: renders run NAME's picture and checks it in the browser.
check() {
  local name=$1 lines=$2 dots=$3 run svg
  run=$(q -c "SELECT run_id FROM hopper.runs WHERE name = '$name'")
  svg=$(q -c "SELECT hopper.learning_curves_svg($run, 'loss', 'training')")
  printf '%s\n' "$svg" >"$work/$name.svg"
  # The page holds the picture inline; its script measures the drawn legend and reads the pixels of
  # the picture rasterized by the browser, and writes its verdict into the page that --dump-dom prints.
  {
    echo '<!doctype html><html><body style="margin:0">'
    printf '%s\n' "$svg"
    cat <<EOF
<pre id="result">RESULT not run</pre>
<script>
const expected = {configurations: 3, lines: $lines, dots: $dots};
(async () => {
  const problems = [];
  const svg = document.querySelector('svg');
  const width = svg.width.baseVal.value;
  const legend = [...svg.querySelectorAll('g.legend text')];
  const texts = legend.map(t => t.textContent);
  if (legend.length !== expected.configurations) problems.push('legend entries: ' + legend.length);
  // What tells them apart, without the key and the best one's mark.
  const told = texts.map(t => t.replace(/^mst_key [0-9]+:?/, '').replace(/ \(best\)$/, ''));
  if (new Set(told).size !== told.length) problems.push('legend entries alike: ' + texts.join(' | '));
  for (const t of legend) {
    const box = t.getBBox();
    if (box.width <= 0 || box.x + box.width > width) problems.push('legend entry cut off: ' + t.textContent);
    if (!/lr=0\.[0-9]+/.test(t.textContent)) problems.push('legend entry without the learning rate: ' + t.textContent);
  }
  const polylines = svg.querySelectorAll('polyline').length;
  if (polylines !== expected.lines) problems.push('lines: ' + polylines);
  // The picture as the browser rasterizes it: each dot's centre pixel is its curve's colour.
  const img = new Image();
  img.src = URL.createObjectURL(new Blob([svg.outerHTML], {type: 'image/svg+xml'}));
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.width;
  canvas.height = img.height;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const markers = [...svg.querySelectorAll('circle.marker')];
  if (markers.length !== expected.dots) problems.push('dots: ' + markers.length);
  for (const c of markers) {
    const p = ctx.getImageData(Math.round(c.cx.baseVal.value), Math.round(c.cy.baseVal.value), 1, 1).data;
    const hex = '#' + [p[0], p[1], p[2]].map(v => v.toString(16).padStart(2, '0')).join('');
    if (hex !== c.getAttribute('fill')) problems.push('dot at ' + c.cx.baseVal.value + ',' + c.cy.baseVal.value + ' is ' + hex);
  }
  document.getElementById('result').textContent =
      'RESULT ' + (problems.length ? 'failed: ' + problems.join('; ') : 'ok: ' + texts.join(' | '));
})().catch(e => { document.getElementById('result').textContent = 'RESULT failed: ' + e; });
</script></body></html>
EOF
  } >"$work/$name.html"
  local verdict
  verdict=$(browse --virtual-time-budget=10000 --dump-dom "file://$work/$name.html" | grep -o -m1 'RESULT [^<]*' | head -n1 || true)
  case "$verdict" in
    "RESULT ok"*) echo "plot_render.sh: $name: ${verdict#RESULT }" ;;
    *) fail "$name: ${verdict:-the browser printed no verdict}" ;;
  esac
  # A screenshot of the picture itself, for people (and a check that the browser draws it at all).
  local size
  size=$(sed -n 's/^<svg [^>]* width="\([0-9]*\)" height="\([0-9]*\)".*/\1,\2/p' "$work/$name.svg")
  browse --window-size="$size" --screenshot="$shots/$name.png" "file://$work/$name.svg" >/dev/null
  [ "$(stat -c %s "$shots/$name.png" 2>/dev/null || echo 0)" -gt 5000 ] || fail "$name: no screenshot"
}

check every 3 0
check last 0 3
psql -qX -d postgres -c "DROP DATABASE $DB"
echo "plot_render.sh: ok"
