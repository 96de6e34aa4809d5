"""Who may do what in the cluster: the admission policies that keep every GPU of a team
namespace behind its queue, the device rules they apply, and the team members' roles."""
