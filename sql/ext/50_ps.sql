-- Parameter-server tables: float4 values per int8 key in shared memory, read and updated by
-- numbered workers with BSP, SSP, SparseSSP or ASP consistency (docs/parameter_server.md); one
-- logical table may be split over several servers by a range map (ps_create_part). Needs
-- shared_preload_libraries = 'hopper'. Creating, dropping and Adds take effect at once and are not
-- undone by ROLLBACK. Every function here is VOLATILE and PARALLEL UNSAFE unless noted: they read
-- and change shared state, may wait for other sessions, and bind workers to the calling session.

#include "objects/ps_create.sql"
#include "objects/ps_create_part.sql"
#include "objects/ps_drop.sql"
#include "objects/ps_get.sql"
#include "objects/ps_add.sql"
#include "objects/ps_clock.sql"
#include "objects/ps_get_chunk.sql"
#include "objects/ps_add_chunk.sql"
#include "objects/ps_get_bytes.sql"
#include "objects/ps_add_bytes.sql"
#include "objects/ps_get_chunk_bytes.sql"
#include "objects/ps_add_chunk_bytes.sql"
#include "objects/ps_tables_internal.sql"
#include "objects/ps_tables.sql"
#include "objects/ps_workers_internal.sql"
#include "objects/ps_workers.sql"
#include "objects/ps_memory.sql"
#include "objects/ps_save.sql"
#include "objects/ps_restore.sql"
