#include "workers.h"
