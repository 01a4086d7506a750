-- hopper drops or replaces a table (a warm start replaces the model output and its _info, _summary
-- and _hops tables) only when it can prove it created it: the table's comment carries a token
-- "[hopper:<uuid>]" and this catalog has a row with that token and the table's kind. Only a table's
-- owner can set its comment, and a row here can only be added for oneself, so no role can make
-- hopper replace another role's table, and a user's table that merely has the right name is never
-- touched. The proof survives pg_dump and pg_upgrade (comments and these rows are kept) and renames.
CREATE TABLE hopper.output_tables (
    token uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('model', 'model_info', 'model_summary', 'model_hops', 'packed',
                                       'packed_summary', 'model_selection', 'model_selection_summary',
                                       'model_arch', 'predictions', 'custom_functions')),
    -- Where hopper created it (the table may have been renamed since).
    schema_name name NOT NULL,
    table_name name NOT NULL,
    -- The training run that wrote it, for model tables written by fit, fit_multiple, fit_data_parallel.
    run_id bigint,
    owner name NOT NULL DEFAULT CURRENT_USER,
    creation_time timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (token, kind)
);
COMMENT ON TABLE hopper.output_tables IS
'every table hopper created (model outputs and their _info/_summary/_hops, packed tables, model selection and architecture tables, predictions, hopper_madlib''s custom function tables): hopper replaces a table only if its comment carries the token of a row here of the right kind';

-- Rows are added for oneself and never changed; removing one only makes hopper forget a table.
ALTER TABLE hopper.output_tables ENABLE ROW LEVEL SECURITY;
CREATE POLICY output_tables_read ON hopper.output_tables FOR SELECT USING (true);
CREATE POLICY output_tables_insert ON hopper.output_tables FOR INSERT WITH CHECK (hopper.may_modify(owner));
CREATE POLICY output_tables_delete ON hopper.output_tables FOR DELETE USING (hopper.may_modify(owner));
GRANT SELECT, INSERT, DELETE ON hopper.output_tables TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('hopper.output_tables', '');
