"""Running agents: the runner (any litellm model against a task's world served by mock_workspace,
writing Archipelago run folders) and prompt variants for ablations.

May import: core, load, store, mock_workspace, checks.
"""
