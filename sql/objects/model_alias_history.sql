CREATE TABLE hopper.model_alias_history (
    change_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- No foreign keys: the history outlives the versions it names (and the model's deletion).
    model_id bigint NOT NULL,
    model_name text NOT NULL,
    alias text NOT NULL,
    from_version integer,  -- NULL: the alias was created
    to_version integer,    -- NULL: the alias was deleted (or went with its version)
    changed_by name NOT NULL DEFAULT CURRENT_USER,
    change_time timestamptz NOT NULL DEFAULT now(),
    CHECK (from_version IS NOT NULL OR to_version IS NOT NULL)
);
CREATE INDEX model_alias_history_model_idx ON hopper.model_alias_history (model_id, lower(alias), change_id);
COMMENT ON TABLE hopper.model_alias_history IS
'every change of a model alias: which role moved it from which version to which, and when (written by the triggers of hopper.model_aliases and hopper.model_versions)';
-- Everyone reads; rows are added only by the triggers, as the role making the change (no UPDATE or
-- DELETE for anyone but the table's owner: the history is append-only).
GRANT SELECT, INSERT ON hopper.model_alias_history TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('hopper.model_alias_history', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.model_alias_history', 'change_id'), '');
