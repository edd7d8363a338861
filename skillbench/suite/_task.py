"""Agentic task fields of a test prompt: workspace files, setup commands, deterministic checks, tool overrides.

All optional, so a qdrant prompt file stays valid unchanged. A prompt with ``workspace`` files or ``setup``
commands is a *task*: the agent starts in a working directory holding those files (:class:`WorkspaceFile`).
``checks`` grade its run deterministically (no judge); each is a :class:`skillbench.checktypes.Check` of a
registered type (:mod:`skillbench.checktypes`), and preflight (:mod:`skillbench.suite._task_checks`) refuses
anything its type's record does not take, one line per defect.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, model_validator


class WorkspaceFile(BaseModel):
    """A file (or folder) put in the run's working directory before the agent starts.

    ``src`` is relative to the prompt file's folder, else to the suite's ``fixtures/`` folder; ``content`` is
    the file's text inline. Exactly one of the two.
    """

    model_config = ConfigDict(extra="forbid")

    dest: StrictStr
    src: StrictStr | None = None
    content: StrictStr | None = None
    executable: StrictBool = False

    @model_validator(mode="after")
    def _one_source(self) -> WorkspaceFile:
        if (self.src is None) == (self.content is None):
            raise ValueError("give exactly one of 'src' and 'content'")
        return self
