"""The task world as an MCP server (mail, calendar, chat, files); built in issue 4."""
