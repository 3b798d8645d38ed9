"""Course platforms: `hookviz export gradescope` and `hookviz gradebook --canvas`."""
