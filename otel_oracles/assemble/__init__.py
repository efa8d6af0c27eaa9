"""assemble stage."""
