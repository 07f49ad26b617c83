"""Native helpers: pairbench.c, the pair engine (run only through slogqual.tools.pairbench)."""
