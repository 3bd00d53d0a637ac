"""The one error the workspace raises for a bad request; the server turns it into a tool error."""


class WorkspaceError(ValueError):
    """A request the workspace refuses: unknown id, path outside the world, bad range, too big."""
