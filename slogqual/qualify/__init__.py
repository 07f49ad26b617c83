"""Qualification: a device judged against a profile — identify, precondition, steady state, sweep, scenarios,
judge — per device or a tray at once. ``door.qualify(request)`` is the door; ``engine.DeviceRun`` measures one device."""
