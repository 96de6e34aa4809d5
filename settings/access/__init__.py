"""Who may do what: a team's people and priorities, each team identity's Blob access and the
condition that grants it, and every Azure role assignment the stack makes."""
