#!/usr/bin/env bash
# TensorBoard event files as TensorBoard reads them (issue 30): hopper_madlib's madlib_keras_fit with
# MADlib's callbacks=[TensorBoard(log_dir=...)] writes the fit's curves through
# hopper.tensorboard_scalars; this reads the files back (pg_read_binary_file: they belong to the
# server's user) and decodes them with a reader of its own -- TFRecord framing with CRC-32C checked
# bit by bit, tensorflow.Event protobuf fields -- and checks what TensorBoard would show: a version
# event first, then epoch_loss and epoch_accuracy at steps 1..3 with the values of the summary's
# training_* / validation_* curves, at times that do not go back.
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT) and python3.
set -euo pipefail
if ! command -v python3 >/dev/null; then
  echo "madlib_tensorboard.sh: SKIPPED: python3 is not installed"
  exit 0
fi
DB=hopper_madlib_tensorboard
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
psql -qX -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
dir=$(q -c "SELECT current_setting('data_directory') || '/hopper_tensorboard_script_' || pg_backend_pid()")
q >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION hopper CASCADE;
CREATE EXTENSION hopper_madlib;
CREATE TABLE pts AS
SELECT g AS id, ARRAY[g % 4, (g % 4) * 2 + g % 2, g % 5]::float8[] AS x, ('c' || g % 4)::varchar AS y
FROM generate_series(1, 80) g;
SELECT madlib.training_preprocessor_dl('pts', 'pts_packed', 'y', 'x', 20);
SELECT madlib.validation_preprocessor_dl('pts', 'pts_val', 'y', 'x', 'pts_packed', 20);
SELECT madlib.load_keras_model('arch', '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d1", "activation": "softmax", "units": 4, "batch_input_shape": [null, 3], "use_bias": true}}]}'::json);
SELECT madlib.madlib_keras_fit('pts_packed', 'tb_model', 'arch', 1,
    \$\$ loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy'] \$\$,
    \$\$ batch_size=10, callbacks=[TensorBoard(log_dir='$dir')] \$\$, 3, FALSE, 'pts_val', 1);
SQL
expected=$(q -c "SELECT json_build_object('train', json_build_object('epoch_loss', training_loss, 'epoch_accuracy', training_metrics),
                                          'validation', json_build_object('epoch_loss', validation_loss, 'epoch_accuracy', validation_metrics),
                                          'steps', metrics_iters) FROM tb_model_summary")
files=$(q -c "SELECT json_object_agg(d, (SELECT encode(pg_read_binary_file('$dir/' || d || '/' || f), 'hex') FROM pg_ls_dir('$dir/' || d) f))
              FROM pg_ls_dir('$dir') d")
python3 - "$expected" "$files" <<'PY'
import json, struct, sys

expected, files = json.loads(sys.argv[1]), json.loads(sys.argv[2])

def crc32c(data):  # bit by bit, Castagnoli polynomial (reflected 0x82F63B78)
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF

def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

assert crc32c(b'123456789') == 0xE3069283

def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << shift; shift += 7
        if not c & 0x80:
            return v, i

def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 1:
            v = b[i:i + 8]; i += 8
        elif wire == 5:
            v = b[i:i + 4]; i += 4
        elif wire == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        else:
            raise AssertionError('wire type %d' % wire)
        out.append((num, v))
    return out

def records(b):
    i = 0
    while i < len(b):
        header = b[i:i + 8]
        (n,) = struct.unpack('<Q', header)
        assert struct.unpack('<I', b[i + 8:i + 12])[0] == masked(crc32c(header)), 'length CRC'
        data = b[i + 12:i + 12 + n]
        assert struct.unpack('<I', b[i + 12 + n:i + 16 + n])[0] == masked(crc32c(data)), 'data CRC'
        yield data
        i += 16 + n

assert sorted(files) == ['train', 'validation'], files
for split, hexdata in files.items():
    events = [dict(fields(e)) for e in records(bytes.fromhex(hexdata))]
    assert events[0].get(3) == b'brain.Event:2', events[0]
    seen, last_time = {}, 0.0
    for e in events[1:]:
        (wall,) = struct.unpack('<d', e[1])
        assert wall >= last_time, 'wall time goes back'
        last_time = wall
        (value,) = [dict(fields(v)) for num, v in fields(e[5]) if num == 1]
        tag = value[1].decode()
        seen.setdefault(tag, []).append((e[2], struct.unpack('<f', value[2])[0]))
    for tag, curve in expected[split].items():
        got = seen.pop(tag)
        assert [s for s, _ in got] == expected['steps'], (split, tag, got)
        assert all(abs(v - w) <= 1e-6 * max(1.0, abs(w)) for (_, v), w in zip(got, curve)), (split, tag, got, curve)
    assert not seen, seen
print('madlib_tensorboard.sh: train and validation event files decode to the summary\'s curves at steps %s'
      % expected['steps'])
PY
psql -qX -d postgres -c "DROP DATABASE $DB"
