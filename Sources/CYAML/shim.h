#ifndef BEARING_CYAML_SHIM_H
#define BEARING_CYAML_SHIM_H

/* libyaml's event parser (Debian: libyaml-dev, runtime libyaml-0-2), for reading Bearing's YAML files
 * without Yams, which imports all of Foundation (and so ICU) into the binary. */
#include <yaml.h>

#endif
