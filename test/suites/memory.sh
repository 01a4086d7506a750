#!/usr/bin/env bash
# Memory: a long training loop does not grow the backend. One session trains (parallel workers
# off, so the training runs in this backend) with fit, fit_multiple, evaluate, predict and
# model_forward in rounds, and preprocess; after warm-up rounds, two blocks of equal work are measured, and the
# second may not grow the backend's resident memory (RssAnon) or its memory contexts more than a
# small bound: a leak of even a few kB per iteration would show up over the 60 iterations of a block.
# Uses the test cluster when PGHOST is set (test/run-all.sh), else starts a throwaway one.
#   MEMORY_ROUNDS (per block, default 20), MEMORY_RSS_KB (bound, default 4096),
#   MEMORY_CONTEXT_KB (bound, default 256)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${MEMORY_ROUNDS:-20}
RSS_BOUND=${MEMORY_RSS_KB:-4096}
CTX_BOUND=${MEMORY_CONTEXT_KB:-256}
own_cluster=""
if [ -z "${PGHOST:-}" ]; then
  own_cluster=$(mktemp -d /tmp/hopper-memory.XXXXXX)
  eval "$(HOPPER_TEST_PORT=${HOPPER_TEST_PORT:-54391} test/cluster.sh start "$own_cluster")"
  trap 'test/cluster.sh stop "$own_cluster"' EXIT
fi
DB=hopper_memory
PGOPTIONS="-c client_min_messages=warning" psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
out=$(psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" -v rounds="$ROUNDS" 2>&1 <<'SQL'
SET client_min_messages = warning;
-- Temporary-table buffers are a cache that grows up to temp_buffers: keep it small so that the
-- warm-up fills it.
SET temp_buffers = '800kB';
CREATE EXTENSION hopper;
CREATE TABLE src AS
SELECT g AS id, (SELECT array_agg(sin(g * 0.3 + k)) FROM generate_series(1, 10) k)::float8[] AS x, (g % 5)::text AS y
FROM generate_series(1, 2000) g;
SELECT hopper.preprocess('src', 'packed', 'y', 'x', buffer_size => 100, num_segments => 2);
SELECT hopper.load_model_arch('archs', '{"input_dim": 10, "layers": [{"units": 64, "activation": "relu"}, {"units": 5, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.1)'$$], ARRAY['batch_size=10', 'batch_size=50']);
-- The backend's own private resident memory (RssAnon: the heap, where a C++ leak would show; VmRSS
-- would also count the shared buffers the backend touches) and its memory-context total.
CREATE FUNCTION rss_kb() RETURNS bigint LANGUAGE sql AS
$$ SELECT (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\s+(\d+)'))[1]::bigint $$;
CREATE FUNCTION context_kb() RETURNS bigint LANGUAGE sql AS
$$ SELECT sum(total_bytes) / 1024 FROM pg_backend_memory_contexts $$;
-- No parallel workers: every training statement runs in this backend.
SET max_parallel_workers = 0;
CREATE PROCEDURE train_rounds(n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR r IN 1 .. n LOOP
        CALL hopper.fit('packed', 'm', '{"input_dim": 10, "layers": [{"units": 64, "activation": "relu"}, {"units": 5, "activation": "softmax"}]}',
                        $c$optimizer='Adam(lr=0.01)', metrics=['accuracy']$c$, 'batch_size=20', 2);
        CALL hopper.fit_multiple('packed', 'mm', 'configs', 1, metrics_compute_frequency => 1);
        PERFORM * FROM hopper.evaluate('mm', 'packed');
        PERFORM hopper.predict('m', 'src', 'id', 'x', 'p', 'prob');
        PERFORM hopper.model_forward(m.model_state, s.x, 1, NULL, NULL) FROM src s, m;
        PERFORM hopper.preprocess('src', 'pk', 'y', 'x', buffer_size => 100, num_segments => 2, scale => 'minmax');
        DROP TABLE m, m_info, m_summary, mm, mm_info, mm_summary, p, pk, pk_summary;
        COMMIT;
    END LOOP;
END $$;
CALL train_rounds(5);
SELECT 'warm', rss_kb(), context_kb();
CALL train_rounds(:rounds);
SELECT 'first', rss_kb(), context_kb();
CALL train_rounds(:rounds);
SELECT 'second', rss_kb(), context_kb();
SQL
) || { echo "$out"; echo "memory.sh: FAILED to run the training loop"; exit 1; }
psql -qX -d postgres -c "DROP DATABASE $DB"
read -r _ rss0 ctx0 <<<"$(echo "$out" | grep '^warm|' | tr '|' ' ')"
read -r _ rss1 ctx1 <<<"$(echo "$out" | grep '^first|' | tr '|' ' ')"
read -r _ rss2 ctx2 <<<"$(echo "$out" | grep '^second|' | tr '|' ' ')"
iterations=$((ROUNDS * 3))
printf 'memory.sh: backend after warm-up %d kB RSS / %d kB contexts; after %d more iterations %d / %d; after %d more %d / %d\n' \
  "$rss0" "$ctx0" "$iterations" "$rss1" "$ctx1" "$iterations" "$rss2" "$ctx2"
grow_rss=$((rss2 - rss1))
grow_ctx=$((ctx2 - ctx1))
if [ $grow_rss -gt "$RSS_BOUND" ] || [ $grow_ctx -gt "$CTX_BOUND" ]; then
  echo "memory.sh: FAILED: the second block grew the backend by $grow_rss kB RSS (bound $RSS_BOUND) and $grow_ctx kB of contexts (bound $CTX_BOUND)"
  exit 1
fi
echo "memory.sh: ok (second block: RSS $grow_rss kB, contexts $grow_ctx kB)"

# Within one CALL: a fit of many short iterations, sampled from another session at iterations 300
# and 2300 (hopper.run_progress), may not grow its backend either. Before, each iteration left ~2 kB
# in the procedure's context (search_path's check hook, the tables' relock), which lives as long as
# the CALL: 1 MB a second on tiny data (a hostile review), unbounded in a long run.
CALL_BOUND=${MEMORY_CALL_KB:-1024}
PGOPTIONS="-c client_min_messages=warning" psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
psql -qX -v ON_ERROR_STOP=1 -d "$DB" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE tiny AS SELECT g AS id, ARRAY[sin(g), cos(g)]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 60) g;
SELECT hopper.preprocess('tiny', 'tiny_packed', 'y', 'x', num_segments => 1);
SQL
PGAPPNAME=hopper_memory_call psql -qX -d "$DB" -c "SET max_parallel_workers = 0" \
  -c "CALL hopper.fit('tiny_packed', 'long_fit', '{\"layers\": [{\"units\": 3, \"activation\": \"softmax\"}]}', num_iterations => 1000000, metrics_compute_frequency => 1000000, checkpoint_frequency => 1000000)" \
  >/dev/null 2>&1 &
call_psql=$!
rss_at() {  # RssAnon of the fit's backend once it has done $1 iterations
  local pid=""
  for _ in $(seq 1 1200); do
    pid=$(psql -qAtX -d "$DB" -c "SELECT pid FROM hopper.run_progress WHERE iteration >= $1 LIMIT 1")
    [ -n "$pid" ] && break
    sleep 0.05
  done
  [ -n "$pid" ] || { echo "memory.sh: FAILED: the long fit never reached iteration $1" >&2; return 1; }
  awk '/^RssAnon:/ {print $2}' "/proc/$pid/status"
}
rss_a=$(rss_at 300) && rss_b=$(rss_at 2300) || { kill "$call_psql" 2>/dev/null; exit 1; }
psql -qAtX -d "$DB" -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'hopper_memory_call'" >/dev/null
wait "$call_psql" || true
psql -qX -d postgres -c "DROP DATABASE $DB"
grow_call=$((rss_b - rss_a))
if [ $grow_call -gt "$CALL_BOUND" ]; then
  echo "memory.sh: FAILED: one CALL grew its backend by $grow_call kB over 2,000 iterations ($rss_a -> $rss_b kB; bound $CALL_BOUND)"
  exit 1
fi
echo "memory.sh: ok (one CALL over 2,000 iterations: RSS $grow_call kB)"
