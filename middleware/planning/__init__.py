"""Relation-path planning: answers found by walking the graph, not by what the LLM knows.

- ``relpaths``: relation paths as data (steps of predicate and direction), keys, phrases.
- ``masking``: the question with its topic span masked, the same at learning and asking.
- ``mining``: for a question with known answers, the relation paths from its topic
  entity that reach the most answers with the fewest other entities.
- ``memory``: the learned questions and their paths, saved per source (versioned).
- ``candidates``: zero-shot, the relation paths that exist from a topic, grown hop by hop.
- ``planner``: a question's best relation paths, voted by its nearest learned
  questions or ranked zero-shot, executed as SPARQL; the walks are the evidence.
"""
