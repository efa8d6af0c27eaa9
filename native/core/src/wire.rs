//! Protobuf wire-format reading (varints, length-delimited fields), zero-copy over the input.
