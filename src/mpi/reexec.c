/* reexec.c: code and static data at the same addresses on every rank.
 *
 * Stolen frames hold return addresses and pointers to static data, so every
 * rank must load the program at the same addresses. Where address
 * randomisation is on, a constructor re-executes the program once, before
 * main, with ADDR_NO_RANDOMIZE in its personality (ThreadSanitizer does
 * the same for its own layout). It does so only under an MPI launcher with
 * more than one rank (one rank moves nothing), and never twice: the
 * re-executed image finds WEFT_DIST_REEXEC set. WEFT_DIST_NO_REEXEC=1
 * turns it off (debuggers, tests that simulate a system where it fails);
 * weft_dist_init then fails with one line saying how to run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "mpi/dist.h"

#define ALL_PERSONALITY 0xffffffffUL /* personality(2): query without change */

extern char **environ;

static int randomising_kernel(void)
{
    FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "r");
    int v = 2;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = 2;
        fclose(f);
    }
    return v != 0;
}

static int randomised(void)
{
    int p = personality(ALL_PERSONALITY);
    return (p == -1 || !(p & ADDR_NO_RANDOMIZE)) && randomising_kernel();
}

/* The rank count an MPI launcher announces (MPICH's Hydra, Open MPI,
 * PMIx, Slurm), 0 when none does. */
static long launcher_size(void)
{
    static const char *vars[] = { "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE",
                                  "MPI_LOCALNRANKS", "SLURM_NTASKS" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strtol(v, NULL, 10);
    }
    return 0;
}

const char *weft__dist_aslr_problem(void)
{
    if (!randomised())
        return NULL;
    return "address randomisation is on and could not be turned off, but code and static "
           "data must sit at the same addresses on every rank; run as: mpiexec -n N setarch "
           "$(uname -m) -R PROG";
}

/* glibc hands constructors (argc, argv, envp). */
__attribute__((constructor)) static void reexec_unrandomised(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)envp;
    const char *no = getenv("WEFT_DIST_NO_REEXEC");
    if ((no && *no && strcmp(no, "0") != 0) || getenv("WEFT_DIST_REEXEC") || !argv ||
        launcher_size() < 2 || !randomised())
        return;
    int p = personality(ALL_PERSONALITY);
    if (p == -1 || personality((unsigned long)p | ADDR_NO_RANDOMIZE) == -1)
        return;
    if (setenv("WEFT_DIST_REEXEC", "1", 1) == 0)
        execve("/proc/self/exe", argv, environ);
    /* could not: go on randomised; weft_dist_init reports it */
    unsetenv("WEFT_DIST_REEXEC");
    personality((unsigned long)p);
}
