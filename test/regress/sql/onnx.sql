-- ONNX export and import (hopper.export_onnx, hopper.import_onnx): what they write and read, and
-- every error branch. ONNX Runtime and PyTorch check the numbers in test/scripts/onnx_roundtrip.sh.
CREATE SCHEMA test_onnx;
SET search_path = test_onnx, public;
SET client_min_messages = warning;

CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    msg := st || ': ' || msg || coalesce(' | DETAIL: ' || nullif(det, ''), '') || coalesce(' | HINT: ' || nullif(hnt, ''), '');
    RETURN regexp_replace(msg, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g');
END $$;

CREATE TABLE onnx_pts AS
SELECT g AS id, ARRAY[(g % 2) * 3.0 + sin(g), (g % 2) * -2.0 + cos(g * 3), 10 + 5 * sin(g * 7)]::float8[] AS x,
       CASE g % 2 WHEN 0 THEN 'even' ELSE 'odd' END AS label
FROM generate_series(1, 100) g;
SELECT hopper.preprocess('onnx_pts', 'onnx_packed', 'label', 'x', buffer_size => 25, scale => 'standardize', seed => 1);
CALL hopper.fit('onnx_packed', 'onnx_m', '{"input_dim": 3, "layers": [{"units": 4, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, 'batch_size=10', 2, name => 'onnx_fit');
SELECT hopper.create_model('onnx_model') > 0 AS created;
SELECT hopper.register_model_version('onnx_model', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_fit')) AS version;
SELECT hopper.set_model_alias('onnx_model', 'prod', 1);

-- Export: by latest, number, alias and checkpoint; the bytes of one version are the same each way
-- but by checkpoint (its graph is named after the checkpoint).
SELECT octet_length(hopper.export_onnx('onnx_model')) > 200 AS exported,
       hopper.export_onnx('onnx_model') = hopper.export_onnx('onnx_model', 1) AS by_number,
       hopper.export_onnx('onnx_model') = hopper.export_onnx('ONNX_MODEL', alias => 'prod') AS by_alias,
       hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_fit')) <> hopper.export_onnx('onnx_model') AS by_uuid;
-- Class names and the opset are in the file (metadata_props, opset_import).
SELECT position(convert_to('["even","odd"]', 'UTF8') IN hopper.export_onnx('onnx_model')) > 0 AS class_values;

-- Export errors: unknown model, version, alias, checkpoint; version and alias both; NULL name.
SELECT pg_temp.try($$SELECT hopper.export_onnx('no_such_model')$$);
SELECT pg_temp.try($$SELECT hopper.export_onnx('onnx_model', 7)$$);
SELECT pg_temp.try($$SELECT hopper.export_onnx('onnx_model', alias => 'staging')$$);
SELECT pg_temp.try($$SELECT hopper.export_onnx('onnx_model', 1, 'prod')$$);
SELECT pg_temp.try($$SELECT hopper.export_onnx('00000000-0000-0000-0000-000000000000'::uuid)$$);
SELECT pg_temp.try($$SELECT hopper.export_onnx(NULL::text)$$);
SELECT hopper.export_onnx(NULL::uuid) IS NULL AS strict_uuid;

-- A model trained on a table's columns through a feature recipe takes the raw columns as named
-- inputs (ONNX-ML encoders, opset ai.onnx.ml 2); importing such a graph back is refused.
CREATE TABLE onnx_tab AS
SELECT g AS id, (g % 2) * 3.0 + sin(g) AS a, CASE WHEN g % 3 = 0 THEN 'x' ELSE 'y' END AS b,
       CASE g % 2 WHEN 0 THEN 'even' ELSE 'odd' END AS label
FROM generate_series(1, 60) g;
SELECT hopper.preprocess('onnx_tab', 'onnx_tab_packed', 'label', '*', exclude_columns => 'id', buffer_size => 20, seed => 1);
CALL hopper.fit('onnx_tab_packed', 'onnx_tab_m', '{"input_dim": 4, "layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, 'batch_size=10', 1, name => 'onnx_tab_fit');
CREATE TABLE onnx_tab_export AS
SELECT hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_tab_fit')) AS onnx;
SELECT position('ai.onnx.ml'::bytea IN onnx) > 0 AS ml_opset, position('LabelEncoder'::bytea IN onnx) > 0 AS label_encoder,
       position('OneHotEncoder'::bytea IN onnx) > 0 AS one_hot, position('Imputer'::bytea IN onnx) > 0 AS imputer
FROM onnx_tab_export;
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', (SELECT onnx FROM onnx_tab_export))$$);
-- The empty string as a category of its own: the graph takes "" for NULL (string tensors have none),
-- so the two cannot be told apart there; the export warns, naming the column.
UPDATE onnx_tab SET b = '' WHERE id % 5 = 0;
UPDATE onnx_tab SET b = NULL WHERE id % 7 = 0;
SELECT hopper.preprocess('onnx_tab', 'onnx_empty_packed', 'label', '*', exclude_columns => 'id', buffer_size => 20, seed => 1);
CALL hopper.fit('onnx_empty_packed', 'onnx_empty_m', '{"input_dim": 6, "layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, 'batch_size=10', 1, name => 'onnx_empty_fit');
SELECT hopper.create_model('onnx_empty') > 0 AS created;
SELECT hopper.register_model_version('onnx_empty', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_empty_fit')) AS version;
SELECT octet_length(hopper.export_onnx('onnx_empty')) > 0 AS exported_with_warning;
SELECT hopper.delete_model('onnx_empty');
-- char(n) columns: the recipe's categories are trimmed (::text), drivers and to_jsonb hand the values
-- blank-padded; the graph maps both forms alike (each category padded to n is a key too) and the
-- export says so, naming the columns.
CREATE TABLE onnx_char AS
SELECT g AS id, (CASE g % 3 WHEN 0 THEN 'ab' WHEN 1 THEN 'abcd' ELSE 'é' END)::char(4) AS k, g % 5 AS n,
       CASE g % 2 WHEN 0 THEN 'even' ELSE 'odd' END AS label
FROM generate_series(1, 60) g;
SELECT hopper.preprocess('onnx_char', 'onnx_char_packed', 'label', '*', exclude_columns => 'id', buffer_size => 20, seed => 1,
                         columns => '{"n": {"kind": "categorical"}}');
CALL hopper.fit('onnx_char_packed', 'onnx_char_m', '{"layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, 'batch_size=10', 1, name => 'onnx_char_fit');
SELECT hopper.create_model('onnx_char') > 0 AS created;
SELECT hopper.register_model_version('onnx_char', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_char_fit')) AS version;
SET client_min_messages = notice;
CREATE TABLE onnx_char_export AS SELECT hopper.export_onnx('onnx_char') AS onnx;
SET client_min_messages = warning;
-- (keys as the graph stores them: a length byte, then the UTF-8 bytes; é padded by characters)
SELECT position('\x0461622020'::bytea IN onnx) > 0 AS ab_padded, position('\x05c3a9202020'::bytea IN onnx) > 0 AS e_padded,
       position('\x0461626364'::bytea IN onnx) > 0 AS full_width, position('\x0420202020'::bytea IN onnx) > 0 AS empty_padded
FROM onnx_char_export;
SELECT hopper.delete_model('onnx_char');

-- Import: a PyTorch MLP (torch.onnx.export of Linear(3, 4), ReLU, Linear(4, 2), Softmax).
SELECT hopper.import_onnx('onnx_arch', '\x080712077079746f7263681a06312e31332e303ac4040a6a0a05696e7075740a08302e7765696768740a06302e6269617312102f302f47656d6d5f6f75747075745f301a072f302f47656d6d220447656d6d2a0f0a05616c706861150000803fa001012a0e0a0462657461150000803fa001012a0d0a067472616e73421801a001020a330a102f302f47656d6d5f6f75747075745f3012102f312f52656c755f6f75747075745f301a072f312f52656c75220452656c750a750a102f312f52656c755f6f75747075745f300a08322e7765696768740a06322e6269617312102f322f47656d6d5f6f75747075745f301a072f322f47656d6d220447656d6d2a0f0a05616c706861150000803fa001012a0e0a0462657461150000803fa001012a0d0a067472616e73421801a001020a3c0a102f322f47656d6d5f6f75747075745f3012066f75747075741a0a2f332f536f66746d61782207536f66746d61782a0b0a04617869731801a001021209746f7263685f6a69742a420804080310014208302e7765696768744a3045fa233e7e52e93ce3ec573ed26466bea56a2cbd27e654bd3862ab3d2b2717bb0b34013f49fa373e472b5cbe7288b2be2a1e080410014206302e626961734a10e430c6bdf1027fbe88733dbea076e23c2a320802080410014208322e7765696768744a20d49b983e38258b3ec640fabe1cb39e3ec8080f3e88d4f23eaef9a83e5240e9be2a16080210014206322e626961734a082e68f3be3cf476be5a170a05696e707574120e0a0c080112080a0208010a02080362180a066f7574707574120e0a0c080112080a0208010a0208024202100d', 'torch mlp') AS model_id;
SELECT model_arch, name, description, octet_length(model_weights) > 0 AS has_weights FROM onnx_arch;
-- hopper's own export imports as the same architecture (no input scaling: normalizing_const 1).
SELECT hopper.preprocess('onnx_pts', 'onnx_plain_packed', 'label', 'x', buffer_size => 25, seed => 1);
CALL hopper.fit('onnx_plain_packed', 'onnx_plain', '{"input_dim": 3, "layers": [{"units": 4, "activation": "relu", "dropout": 0.25}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, 'batch_size=10', 1, name => 'onnx_plain_fit');
SELECT hopper.import_onnx('onnx_arch', hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_plain_fit')), 'hopper') AS model_id;
-- (dropout, which the graph leaves out, comes back from the architecture hopper keeps in the metadata)
SELECT a.model_arch,
       hopper.model_forward(a.model_weights, ARRAY[1, 2, 3]) = hopper.model_forward(m.model_state, ARRAY[1, 2, 3]) AS same_outputs
FROM onnx_arch a, onnx_plain m WHERE a.name = 'hopper';
-- ... but a graph with the input scaling in it does not (an architecture holds no scaling).
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', hopper.export_onnx('onnx_model'))$$);

-- Import errors: corrupt, truncated, empty, unsupported operator (named with its node), beyond the
-- limits (an image of 2,000,000 values per row), NULL.
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', '\xdeadbeef00ff')$$);
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', substr('\x080712077079746f7263681a06312e31332e303ac4040a6a0a05696e7075740a08302e7765696768740a06302e6269617312102f302f47656d6d5f6f75747075745f301a072f302f47656d6d220447656d6d2a0f0a05616c706861150000803fa001012a0e0a0462657461150000803fa001012a0d0a067472616e73421801a001020a330a102f302f47656d6d5f6f75747075745f3012102f312f52656c755f6f75747075745f301a072f312f52656c75220452656c750a750a102f312f52656c755f6f75747075745f300a08322e7765696768740a06322e6269617312102f322f47656d6d5f6f75747075745f301a072f322f47656d6d220447656d6d2a0f0a05616c706861150000803fa001012a0e0a0462657461150000803fa001012a0d0a067472616e73421801a001020a3c0a102f322f47656d6d5f6f75747075745f3012066f75747075741a0a2f332f536f66746d61782207536f66746d61782a0b0a04617869731801a001021209746f7263685f6a69742a420804080310014208302e7765696768744a3045fa233e7e52e93ce3ec573ed26466bea56a2cbd27e654bd3862ab3d2b2717bb0b34013f49fa373e472b5cbe7288b2be2a1e080410014206302e626961734a10e430c6bdf1027fbe88733dbea076e23c2a320802080410014208322e7765696768744a20d49b983e38258b3ec640fabe1cb39e3ec8080f3e88d4f23eaef9a83e5240e9be2a16080210014206322e626961734a082e68f3be3cf476be5a170a05696e707574120e0a0c080112080a0208010a02080362180a066f7574707574120e0a0c080112080a0208010a0208024202100d'::bytea, 1, 300))$$);
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', '\x')$$);
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', '\x080712077079746f7263681a06312e31332e303ab4020a6a0a05696e7075740a08302e7765696768740a06302e6269617312102f302f47656d6d5f6f75747075745f301a072f302f47656d6d220447656d6d2a0f0a05616c706861150000803fa001012a0e0a0462657461150000803fa001012a0d0a067472616e73421801a001020a440a102f302f47656d6d5f6f75747075745f3012066f75747075741a0c2f312f4c65616b7952656c7522094c65616b7952656c752a0f0a05616c706861150ad7233ca001011209746f7263685f6a69742a2a0802080310014208302e7765696768744a184350983e0e7982be7339e5bd3dbf8a3e5c250bbf4747b13e2a16080210014206302e626961734a089a40f3bdea62963e5a170a05696e707574120e0a0c080112080a0208010a02080362180a066f7574707574120e0a0c080112080a0208010a0208024202100d')$$);
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', '\x080712077079746f7263681a06312e31332e303aba030a98010a05696e7075740a08302e7765696768740a06302e6269617312102f302f436f6e765f6f75747075745f301a072f302f436f6e762204436f6e762a120a0964696c6174696f6e7340014001a001072a0c0a0567726f75701801a001022a150a0c6b65726e656c5f736861706540014001a001072a110a04706164734000400040004000a001072a100a077374726964657340014001a001070a5a0a102f302f436f6e765f6f75747075745f30121d2f312f476c6f62616c41766572616765506f6f6c5f6f75747075745f301a142f312f476c6f62616c41766572616765506f6f6c2211476c6f62616c41766572616765506f6f6c0a490a1d2f312f476c6f62616c41766572616765506f6f6c5f6f75747075745f3012066f75747075741a0a2f322f466c617474656e2207466c617474656e2a0b0a04617869731801a001021209746f7263685f6a69742a1a080108010801080110014208302e7765696768744a04785a0e3e2a12080110014206302e626961734a0400c4fabd5a210a05696e70757412180a16080112120a0208010a0208010a0308e8070a0308d00f62180a066f7574707574120e0a0c080112080a0208010a0208014202100d')$$);
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', NULL)$$);
SELECT pg_temp.try($$SELECT hopper.import_onnx(NULL, '\x080712077079746f7263681a06312e31332e303ac4040a6a0a05696e7075740a08302e7765696768740a06302e6269617312102f302f47656d6d5f6f75747075745f301a072f302f47656d6d220447656d6d2a0f0a05616c706861150000803fa001012a0e0a0462657461150000803fa001012a0d0a067472616e73421801a001020a330a102f302f47656d6d5f6f75747075745f3012102f312f52656c755f6f75747075745f301a072f312f52656c75220452656c750a750a102f312f52656c755f6f75747075745f300a08322e7765696768740a06322e6269617312102f322f47656d6d5f6f75747075745f301a072f322f47656d6d220447656d6d2a0f0a05616c706861150000803fa001012a0e0a0462657461150000803fa001012a0d0a067472616e73421801a001020a3c0a102f322f47656d6d5f6f75747075745f3012066f75747075741a0a2f332f536f66746d61782207536f66746d61782a0b0a04617869731801a001021209746f7263685f6a69742a420804080310014208302e7765696768744a3045fa233e7e52e93ce3ec573ed26466bea56a2cbd27e654bd3862ab3d2b2717bb0b34013f49fa373e472b5cbe7288b2be2a1e080410014206302e626961734a10e430c6bdf1027fbe88733dbea076e23c2a320802080410014208322e7765696768744a20d49b983e38258b3ec640fabe1cb39e3ec8080f3e88d4f23eaef9a83e5240e9be2a16080210014206322e626961734a082e68f3be3cf476be5a170a05696e707574120e0a0c080112080a0208010a02080362180a066f7574707574120e0a0c080112080a0208010a0208024202100d')$$);
-- Beyond hopper.max_memory_mb (53200), before anything is read or built: an import (five times the
-- file) and an export (four times the state).
CALL hopper.fit('onnx_plain_packed', 'onnx_wide', '{"input_dim": 3, "layers": [{"units": 60000, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, 'batch_size=50', 1, name => 'onnx_wide_fit');
SET hopper.max_memory_mb = 1;
SELECT pg_temp.try($$SELECT hopper.import_onnx('onnx_arch', decode(repeat('00', 400000), 'hex'))$$);
SELECT pg_temp.try($$SELECT hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_wide_fit'))$$);
RESET hopper.max_memory_mb;
SELECT octet_length(hopper.export_onnx((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'onnx_wide_fit'))) > 1000000 AS wide_exported;
-- Nothing was added by the failed imports.
SELECT count(*) AS architectures FROM onnx_arch;

DROP SCHEMA test_onnx CASCADE;
