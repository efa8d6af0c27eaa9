"""Types of the compiled core (native/python/src/lib.rs): the contract between the Rust
bindings and the Python stages that call them. Keep it in step with the bindings."""

def core_version() -> str:
    """The version of the crate the module was built from."""
