// Shim for OpenBLAS's CBLAS interface. The header lives in a multiarch include directory that
// pkg-config (`openblas.pc`) adds to the search path.
#include <cblas.h>
