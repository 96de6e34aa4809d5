"""Who may do what in the cluster: the admission policies that keep every GPU of a team
namespace behind its queue, the device rules they apply, the team members' roles, the elastic
head's autoscaler rights, and the MultiKueue manager's reach into a worker."""
