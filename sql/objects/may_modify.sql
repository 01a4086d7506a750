-- Whether the current user may change a row owned by `owner`: it is the owner, or a member of it.
CREATE OR REPLACE FUNCTION hopper.may_modify(owner name) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT owner = CURRENT_USER
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                   WHERE r.rolname = owner AND pg_catalog.pg_has_role(r.oid, 'MEMBER'));
END;
COMMENT ON FUNCTION hopper.may_modify(name) IS
'whether the current user may change registry rows owned by owner (it is the owner or a member of that role); used by the row-level security policies';
