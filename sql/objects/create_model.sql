CREATE OR REPLACE FUNCTION hopper.create_model(name text, description text DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                    labels text[] DEFAULT '{}', notes text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'create_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_model(text, text, jsonb, text[], text) IS
'registers a model name (1 to 128 letters, digits, _ - and ., unique without regard to case) owned by the current user; returns its model_id';
