/* state.c: the one instance of a rank's process-local state and of the
 * in-a-run flag (mpi/state.h): a static object, so at the same address on
 * every rank. */
#include "mpi/state.h"

struct weft__dist weft__dist;

__thread int weft__dist_active;
