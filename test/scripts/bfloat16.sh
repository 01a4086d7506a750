#!/usr/bin/env bash
# fit_params precision='bfloat16' (issue 29): where the CPU has AVX512_BF16 and hopper has oneDNN, the
# large products of training multiply bfloat16 copies -- the model differs from float32's and learns as
# well; elsewhere the call is refused with 0A000 before anything is written. Which branch runs depends
# on the machine; each is checked against /proc/cpuinfo (a refusal on a CPU with AVX512_BF16 must
# name the missing oneDNN).
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT).
set -euo pipefail
DB=hopper_bfloat16
fail() { echo "bfloat16.sh: FAILED: $*" >&2; exit 1; }
psql -qX -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
setup() {
  psql -qX -At -v ON_ERROR_STOP=1 -d "$DB" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
-- Two classes told apart by the mean of 784 noisy features: products of 128 x 784 x 250, above
-- oneDNN's cut, where bfloat16 applies.
CREATE TABLE pts AS
SELECT g AS id, (g % 2) AS label,
       ARRAY(SELECT ((g % 2) * 0.2 + sin(g * 13 + j * 7) * 0.5)::real FROM generate_series(1, 784) j) AS x
FROM generate_series(1, 2000) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'label', 'x', buffer_size => 250, num_segments => 1) IS NULL;
SQL
}
setup >/dev/null
fit() {  # output table, precision
  psql -qX -At -d "$DB" -c "SET client_min_messages = warning" -c "CALL hopper.fit('pts_packed', '$1',
    '{\"input_dim\": 784, \"layers\": [{\"units\": 128, \"activation\": \"relu\"}, {\"units\": 2, \"activation\": \"softmax\"}]}',
    \$\$optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$, \$\$batch_size=250, precision='$2'\$\$, 3)" 2>&1
}
fit f32 float32 >/dev/null || fail "float32 fit failed"
if out=$(fit bf16 bfloat16); then
  grep -qw avx512_bf16 /proc/cpuinfo || fail "bfloat16 accepted on a CPU without AVX512_BF16: $out"
  res=$(psql -qX -At -d "$DB" -c "SELECT b.model_state <> f.model_state, abs(bi.training_metrics_final - fi.training_metrics_final) < 0.02,
      bi.training_metrics_final > 0.9, (b.model_config->'fit'->>'precision') FROM bf16 b, f32 f, bf16_info bi, f32_info fi")
  [ "$res" = "t|t|t|bfloat16" ] || fail "bfloat16 run: differs from float32 | accuracy within 2 points | above 0.9 | recorded: $res"
  echo "bfloat16.sh: ok (trained in bfloat16: $res)"
else
  grep -q "precision 'bfloat16' is not supported on this machine" <<<"$out" || fail "$out"
  if grep -qw avx512_bf16 /proc/cpuinfo; then
    grep -q "no oneDNN" <<<"$out" || fail "refused on a CPU with AVX512_BF16, not for want of oneDNN: $out"
  else
    grep -q "no AVX512_BF16" <<<"$out" || fail "refused without naming the CPU's missing AVX512_BF16: $out"
  fi
  [ "$(psql -qX -At -d "$DB" -c "SELECT to_regclass('bf16') IS NULL AND to_regclass('bf16_info') IS NULL")" = t ] ||
    fail "the refused call left output tables"
  echo "bfloat16.sh: ok (refused: no AVX512_BF16 or no oneDNN)"
fi
psql -qX -d postgres -c "DROP DATABASE $DB"
