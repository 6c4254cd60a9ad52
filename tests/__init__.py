"""The suite: tests/<package>/ for each package, tests/integration/ across them."""
