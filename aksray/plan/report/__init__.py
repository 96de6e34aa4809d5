"""What a person reads of a plan: the summary tables, the tree, the Markdown pull-request comment
and its charts."""
