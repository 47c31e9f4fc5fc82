/* shutdown.c: the I/O subsystem's part of weft_finalize. */
#include "io/io.h"

void weft__io_shutdown(void);

void weft__io_shutdown(void)
{
    weft__spares_shutdown();
}
