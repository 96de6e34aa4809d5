"""The program run offline under Pulumi's mock runtime: what it registers, and that record written
as files (render) or as a tree."""
