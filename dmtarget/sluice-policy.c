// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of sluice pool policy types; see sluice-policy.h.
 */
#include <linux/module.h>
#include <linux/kmod.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/device-mapper.h>

#include "sluice-target.h"

#define DM_MSG_PREFIX "sluice"

static LIST_HEAD(sluice_policy_types);
static DEFINE_MUTEX(sluice_policy_lock);

static struct sluice_policy_type *__sluice_policy_find(const char *name)
{
	struct sluice_policy_type *t;

	list_for_each_entry(t, &sluice_policy_types, list)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

static struct sluice_policy_type *sluice_policy_try_get(const char *name)
{
	struct sluice_policy_type *t;

	mutex_lock(&sluice_policy_lock);
	t = __sluice_policy_find(name);
	if (t && !try_module_get(t->owner))
		t = NULL;
	mutex_unlock(&sluice_policy_lock);
	return t;
}

struct sluice_policy_type *sluice_policy_get(const char *name)
{
	struct sluice_policy_type *t = sluice_policy_try_get(name);

	if (t)
		return t;
	request_module("dm-sluice-%s", name);
	return sluice_policy_try_get(name);
}

void sluice_policy_put(struct sluice_policy_type *type)
{
	module_put(type->owner);
}

int sluice_policy_register(struct sluice_policy_type *type)
{
	int r = 0;

	mutex_lock(&sluice_policy_lock);
	if (__sluice_policy_find(type->name)) {
		DMWARN("policy %s is already registered", type->name);
		r = -EINVAL;
	} else {
		list_add(&type->list, &sluice_policy_types);
	}
	mutex_unlock(&sluice_policy_lock);
	return r;
}
EXPORT_SYMBOL_GPL(sluice_policy_register);

void sluice_policy_unregister(struct sluice_policy_type *type)
{
	mutex_lock(&sluice_policy_lock);
	list_del_init(&type->list);
	mutex_unlock(&sluice_policy_lock);
}
EXPORT_SYMBOL_GPL(sluice_policy_unregister);

struct sluice_pool_stamp *sluice_pool_stamp(struct bio *bio)
{
	return &sluice_bio_io(bio)->pool;
}
EXPORT_SYMBOL_GPL(sluice_pool_stamp);
