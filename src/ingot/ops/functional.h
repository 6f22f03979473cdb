// The user-facing op API: free functions over Tensors, one header per area. Every
// function goes through the op registry (eager run, or recorded by the export tracer).
#pragma once

#include "ingot/ops/functional/arithmetic.h"
#include "ingot/ops/functional/comparison.h"
#include "ingot/ops/functional/conv.h"
#include "ingot/ops/functional/creation.h"
#include "ingot/ops/functional/indexing.h"
#include "ingot/ops/functional/inplace.h"
#include "ingot/ops/functional/join.h"
#include "ingot/ops/functional/linalg.h"
#include "ingot/ops/functional/nn.h"
#include "ingot/ops/functional/predicates.h"
#include "ingot/ops/functional/reduction.h"
#include "ingot/ops/functional/sort.h"
#include "ingot/ops/functional/unary.h"
#include "ingot/ops/functional/upsample.h"
#include "ingot/ops/functional/views.h"
