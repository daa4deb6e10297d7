/* placeholder: replaced by the module */
#ifndef T2EXP_LR_SCHEDULE_H
#define T2EXP_LR_SCHEDULE_H
#endif
