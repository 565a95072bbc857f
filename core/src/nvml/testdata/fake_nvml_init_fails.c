/* A library whose only NVML entry points are the legacy init (failing) and nvmlErrorString. */
unsigned nvmlInit(void) { return 9; /* DRIVER_NOT_LOADED */ }
const char *nvmlErrorString(unsigned c) { return c == 9 ? "Driver Not Loaded" : 0; }
