"""The sync-write sweep, a capability room like pool/, powercut/ and qualify/.

``door`` is what a caller uses (``run_sweeps(request)``); ``engine`` measures one target (``SyncWriteSweep``);
``target`` resolves what a sweep writes to; ``shelf_probe`` measures a tray's units alone and together;
``at_once`` runs units at the same time.
"""
