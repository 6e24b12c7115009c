/*
 * keybits.h - the key order lives in the installed include/warpsort/keybits.h
 * (the public device API needs it too); this name keeps the backends'
 * includes short.
 */
#include "warpsort/keybits.h"
