"""mapping stage."""
