package algos_test

import "testing"

func TestScatterCost(t *testing.T) { checkRootedCosts(t, worked, rootedCostCases("scatter")) }
