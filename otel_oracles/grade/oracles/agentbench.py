"""The four AgentBench oracles (test_must_pass, file_not_modified, no_network, assertion_exists)."""
