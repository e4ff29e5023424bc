"""Training code (needs the optional ``.[train]`` extra: ultralytics, torch). Never imported at
run time."""
