"""fsseam as the file layer of agent frameworks, each in its own module.

- :mod:`fsseam.integrations.deepagents`: a deepagents ``BackendProtocol``
  (``pip install 'fsseam[deepagents]'``);
- :mod:`fsseam.integrations.openai_agents`: an ``ApplyPatchEditor`` for the OpenAI Agents
  SDK's ``ApplyPatchTool``, and fsseam's other tools as SDK function tools
  (``pip install 'fsseam[openai-agents]'``);
- :mod:`fsseam.integrations.pydantic_ai`: a Pydantic AI toolset
  (``pip install 'fsseam[pydantic-ai]'``).

Each module imports its framework; this package imports none, and nothing else in fsseam
imports this package. One object of an integration (a backend, an editor and its tools, a
toolset) serves many threads or conversations: each is an observation owner of its own,
and what it read lives in the framework's own state (docs/observations.md), unless an
explicit ``owner=`` names one owner for every run.
"""

__all__: list[str] = []
