// PostgreSQL headers for the port, included after every C++ standard and Eigen header: they
// #define printf, snprintf, qsort and friends, and some use `register`.
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

// PostgreSQL's c.h defines these as macros that break C++ standard headers included later.
#undef printf
#undef sprintf
#undef snprintf
#undef vsnprintf
#undef fprintf
#undef vfprintf
#undef qsort
