# moe-plan.1: the command list under "Commands:" is one synopsis a line; help2man makes it one
# filled paragraph. No-fill (.nf ... .fi) keeps its lines.
/^\.SS "Commands:"$/{
n
s/^\.IP$/.IP\n.nf/
}
/^\.SH OPTIONS$/i .fi
