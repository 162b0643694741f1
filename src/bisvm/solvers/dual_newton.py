from .selective import *  # noqa: F401,F403  # shim16: removed in step 9
